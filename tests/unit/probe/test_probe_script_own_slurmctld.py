"""The probe counts only this node's own slurmctld (issue 35, finding 5): a process of the Slurm
binary the node runs, owned by root or SlurmUser, or systemd's main PID of its unit. Any user can
start a process named slurmctld, even from that binary."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hyperpod_ha.commands import CommandResult
from hyperpod_ha.controllers.check import report_from_result
from hyperpod_ha.controllers.models import ControllerReport
from hyperpod_ha.slurm import parse_probe_output, parse_services
from tests.fakes.probe_host import NODE, ProbeHost
from tests.fakes.slurmctld_processes import AS_ROOT, OTHER_USER, SlurmctldProcesses

needs_root = pytest.mark.skipif(not AS_ROOT, reason="starting a process as another user needs root")


@pytest.fixture
def processes() -> Iterator[SlurmctldProcesses]:
    with SlurmctldProcesses.made() as made:
        yield made


def probe(controller: ProbeHost) -> tuple[ControllerReport, str]:
    text = controller.run()
    services = parse_probe_output(text).sections["services"].text
    return report_from_result(NODE, CommandResult(text, None, None, 1, "t")), services


def test_the_nodes_binary_run_by_root_or_the_test_user_counts(
    controller: ProbeHost, processes: SlurmctldProcesses
) -> None:
    pid = processes.start()
    controller.name_slurmctld([pid], processes.node_binary)
    report, services = probe(controller)

    assert report.slurmctld.running is True
    assert report.slurmctld.pids == (pid,)
    assert "ignored" not in services


@pytest.mark.parametrize("impostor", ["a copy elsewhere", "a script named slurmctld"])
def test_a_process_named_slurmctld_of_another_binary_is_not_counted(
    controller: ProbeHost, processes: SlurmctldProcesses, impostor: str
) -> None:
    binary = processes.binary("elsewhere") if impostor == "a copy elsewhere" else processes.script("bin")
    pid = processes.start(binary)
    controller.name_slurmctld([pid], processes.node_binary)
    report, services = probe(controller)

    assert report.slurmctld.running is False
    assert report.slurmctld.pids == ()
    assert f"ignored slurmctld pid={pid}: not the node's Slurm binary run by root or SlurmUser" in services
    assert [p.pid for p in parse_services(services).processes if p.name == "slurmctld"] == []


@needs_root
def test_the_nodes_binary_run_by_another_user_is_not_counted(
    controller: ProbeHost, processes: SlurmctldProcesses
) -> None:
    # The case: an ordinary user starts Slurm's own slurmctld (its executable is world-readable).
    pid = processes.start(user=OTHER_USER)
    real = processes.start()
    controller.name_slurmctld([pid, real], processes.node_binary)
    report, services = probe(controller)

    assert report.slurmctld.pids == (real,)
    assert f"ignored slurmctld pid={pid}:" in services


@needs_root
def test_slurm_user_owns_the_nodes_slurmctld(controller: ProbeHost, processes: SlurmctldProcesses) -> None:
    # HyperPod runs slurmctld as SlurmUser (slurm); here nobody stands in for it.
    (controller.root / "show_config.txt").write_text(
        controller.show_config() + "SlurmUser               = nobody(65534)\n"
    )
    pid = processes.start(user=OTHER_USER)
    controller.name_slurmctld([pid], processes.node_binary)
    report, _ = probe(controller)

    assert report.slurmctld.pids == (pid,)


@needs_root
def test_systemds_main_pid_of_the_unit_counts_whoever_runs_it(
    controller: ProbeHost, processes: SlurmctldProcesses
) -> None:
    # The unit's User= is SlurmUser, and /opt/slurm may point at a newer release than the one it
    # started from: systemd's main PID is the node's slurmctld all the same.
    pid = processes.start(processes.binary("opt-slurm-24.11"), user=OTHER_USER)
    controller.name_slurmctld([pid], processes.node_binary, main_pid=pid)
    report, _ = probe(controller)

    assert report.slurmctld.pids == (pid,)
