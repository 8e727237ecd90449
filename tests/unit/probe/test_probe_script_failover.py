"""The probe script's failover_conf section on a fake controller: slurm.conf a link to the shared
copy or a local copy (made by GNU ``sed -i`` on the link), the ON/OFF programs, the version, and a
hung shared file system that must not hang the probe."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from hyperpod_ha.commands import CommandResult
from hyperpod_ha.controllers.check import report_from_result
from hyperpod_ha.controllers.models import ControllerReport, ProgramEvidence, ReportStatus
from hyperpod_ha.slurm import parse_probe_output
from tests.fakes.probe_host import NODE, ProbeHost


def shared_conf(controller: ProbeHost, *, programs: bool = True) -> tuple[Path, Path, Path]:
    """HyperPod's layout: a shared slurm.conf beside the programs, the node's path a link to it."""
    shared = controller.root / "fsx"
    (shared / "bin").mkdir(parents=True)
    on, off = shared / "bin" / "on.sh", shared / "bin" / "off.sh"
    for program in (on, off):
        program.write_text("#!/bin/sh\nexit 0\n")
        program.chmod(0o755)
    conf = shared / "slurm.conf"
    lines = ["ClusterName=lab", "SlurmctldHost=ctl1(10.214.0.11)", "SlurmctldHost=ctl2(10.214.0.12)"]
    lines += ["SlurmctldTimeout=10", f"StateSaveLocation={controller.state}", "# Slurmctld settings"]
    if programs:
        lines += [f"SlurmctldPrimaryOnProg={on}", f"SlurmctldPrimaryOffProg={off}"]
    conf.write_text("\n".join(lines) + "\n")
    link = controller.root / "etc" / "slurm.conf"
    link.parent.mkdir()
    link.symlink_to(conf)
    controller.env["SLURM_CONF"] = str(link)
    controller.commands["slurmctld"] = '[ "$1" = -V ] && echo "slurm 24.11.5"\n'
    running = "".join(f"SlurmctldPrimary{slot}Prog  = {path}\n" for slot, path in (("On", on), ("Off", off)))
    (controller.root / "show_config.txt").write_text(controller.show_config() + running)
    return link, on, off


def report(controller: ProbeHost) -> ControllerReport:
    found = report_from_result(NODE, CommandResult(controller.run(), None, None, 1, "t"))
    assert found.status is ReportStatus.CHECKED
    return found


def test_a_link_to_the_shared_copy_and_both_programs(controller: ProbeHost) -> None:
    link, on, off = shared_conf(controller)
    failover = report(controller).failover

    assert (failover.conf_path, failover.conf_link) == (str(link), True)
    assert failover.conf_resolved == str(link.resolve())
    assert failover.conf_sha256 == hashlib.sha256(link.read_bytes()).hexdigest()
    assert failover.conf_fstype
    assert failover.version == "24.11.5"
    assert [h.name for h in failover.controllers] == ["ctl1", "ctl2"]
    assert failover.on_prog == failover.running_on_prog == ProgramEvidence(True, str(on), "executable")
    assert failover.off_prog == failover.running_off_prog == ProgramEvidence(True, str(off), "executable")


def test_gnu_sed_i_on_the_link_leaves_a_local_copy(controller: ProbeHost) -> None:
    link, _, _ = shared_conf(controller)
    shared = link.resolve()
    before = report(controller).failover
    # What HyperPod's start_slurm.sh does to /opt/slurm/etc/slurm.conf once it is a link.
    subprocess.run(["sed", "-i", "-e", "s/^SlurmctldTimeout=.*/SlurmctldTimeout=20/", str(link)], check=True)
    after = report(controller).failover

    assert not link.is_symlink()
    assert "SlurmctldTimeout=10" in shared.read_text()  # the shared copy is left behind
    assert (after.conf_link, after.conf_resolved) == (False, str(link))
    assert after.conf_sha256 != before.conf_sha256
    assert (before.slurmctld_timeout, after.slurmctld_timeout) == (10, 20)


@pytest.mark.parametrize(("mode", "state"), [(0o644, "not_executable"), (None, "missing")])
def test_a_program_that_cannot_run(controller: ProbeHost, mode: int | None, state: str) -> None:
    _, on, _ = shared_conf(controller)
    if mode is None:
        on.unlink()
    else:
        on.chmod(mode)
    failover = report(controller).failover

    assert failover.on_prog == failover.running_on_prog == ProgramEvidence(True, str(on), state)
    assert failover.off_prog.state == "executable"


def test_programs_not_set(controller: ProbeHost) -> None:
    shared_conf(controller, programs=False)
    (controller.root / "show_config.txt").write_text(
        controller.show_config() + "SlurmctldPrimaryOffProg = (null)\nSlurmctldPrimaryOnProg  = (null)\n"
    )
    failover = report(controller).failover

    unset = ProgramEvidence(False, None, None)
    assert (failover.on_prog, failover.off_prog, failover.running_on_prog, failover.running_off_prog) == (
        unset,
    ) * 4


def test_without_slurmctld_or_slurm_conf_the_fields_are_unknown(controller: ProbeHost) -> None:
    # The fixture's host has no slurm.conf on the probe's paths; no slurmctld on a PATH of the
    # system's tools and the fake Slurm commands alone.
    text = controller.run(restricted_path=True)
    failover = report_from_result(NODE, CommandResult(text, None, None, 1, "t")).failover

    assert failover.version is None
    assert failover.error == "slurm.conf: no readable slurm.conf found"
    assert failover.on_prog.configured is None  # slurm.conf could not be read: unknown
    assert failover.running_on_prog.configured is False  # show config answered without them


def test_a_hung_shared_file_system_does_not_hang_the_probe(controller: ProbeHost) -> None:
    shared_conf(controller)
    controller.commands["sha256sum"] = "exec sleep 600\n"
    controller.env["HYPERPOD_HA_PROBE_TIMEOUT"] = "2"
    text = controller.run(timeout=40)  # a probe that hung would be killed here, failing the test

    output = parse_probe_output(text)
    assert output.complete
    failover = report_from_result(NODE, CommandResult(text, None, None, 1, "t")).failover
    assert failover.error == "slurm.conf: timed out hashing slurm.conf"
    assert failover.conf_sha256 is None
    assert (failover.version, failover.conf_link) == ("24.11.5", True)  # what it found still counts
