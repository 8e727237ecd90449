"""The probe script itself, run by bash on a fake controller: a healthy primary, its command
line, and what it never changes or waits for."""

from __future__ import annotations

import shlex
from pathlib import Path

from hyperpod_ha.commands import CommandResult
from hyperpod_ha.controllers.check import report_from_result
from hyperpod_ha.controllers.models import ReportStatus
from hyperpod_ha.node_scripts import MAX_COMMAND_BYTES
from hyperpod_ha.probe import probe_command, probe_script
from hyperpod_ha.slurm import SECTIONS, parse_probe_output
from hyperpod_ha_dev import CAPTURES
from tests.fakes.probe_host import NODE, SCRIPT, ProbeHost


def test_probe_command_is_one_line_the_agent_can_split(controller: ProbeHost) -> None:
    command = probe_command()
    assert len(command) < MAX_COMMAND_BYTES
    assert "\n" not in command
    program, flag, pipeline = shlex.split(command)
    assert (program, flag) == ("bash", "-c")
    echo, encoded, *rest = pipeline.split(" ")
    assert echo == "echo"
    assert rest == ["|", "base64", "-d", "|", "bash"]
    assert set(encoded) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
    assert probe_script() == SCRIPT.read_text()


def test_probe_reports_every_section_of_a_healthy_primary(controller: ProbeHost) -> None:
    text = controller.run()
    output = parse_probe_output(text)
    assert output.complete
    assert list(output.sections) == list(SECTIONS)
    assert text.rstrip("\n").splitlines()[-1].startswith("HYPERPOD_HA_PROBE_RESULT {")
    for name in (
        "ping",
        "config",
        "sinfo",
        "sdiag",
        "dbd_clusters",
        "role",
        "heartbeat",
        "state_save",
        "services",
    ):
        assert output.sections[name].exit_code == 0, name
    assert output.sections["dbd_ping"].exit_code == 1  # 22.05: invalid keyword: ping
    assert output.sections["slurm_conf"].exit_code == 1  # none on this machine's paths: not needed
    # show config and sdiag keep only the lines the checks need
    assert "AccountingStorageType" in output.sections["config"].text
    assert "ProctrackType" not in output.sections["config"].text
    assert output.sections["sdiag"].text.splitlines() == ["DBD Agent queue size: 0", "Server thread count: 3"]

    report = report_from_result(NODE, CommandResult(text, "", 0, 0.5, "test"))
    assert report.status is ReportStatus.CHECKED
    assert (report.node.controller_index, report.node.controller_name) == (0, "ctl1")
    assert report.node.addresses == ("10.214.0.11",)
    assert [(p.label, p.responding) for p in report.ping.lines] == [("primary", True), ("backup", True)]
    assert report.slurmctld.running is True
    assert report.slurmctld.pids == (controller.daemon.pid,) if controller.daemon else False
    assert report.slurmctld.systemctl == "active"
    assert report.slurmdbd.running is False
    assert report.role.logged == "primary"
    assert report.role.line == "[2026-11-29T23:29:53.870] Running as primary controller"
    assert (report.heartbeat.readable, report.heartbeat.writer_index, report.heartbeat.beat_time) == (
        True,
        0,
        1795995004,
    )
    assert report.state_save.exists is True
    assert report.state_save.writable is True
    assert report.state_save.mount_target
    assert report.state_save.fstype
    assert (report.dbd.reachable, report.dbd.registered_host, report.dbd.ping_supported) == (
        True,
        "10.214.0.11",
        False,
    )
    assert report.dbd.agent_queue_size == 0
    assert report.scheduler.answers is True
    assert report.config.cluster_name == "lab"


def listing(directory: Path) -> list[tuple[str, int, int]]:
    return sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in directory.iterdir())


def test_probe_changes_nothing(controller: ProbeHost) -> None:
    before = listing(controller.state)
    log_before = controller.log.stat().st_mtime_ns
    controller.run()
    assert listing(controller.state) == before
    assert controller.log.stat().st_mtime_ns == log_before
    assert list((controller.root / "tmp").iterdir()) == []  # its work directory is gone


def test_the_write_test_creates_an_unguessable_file_exclusively(controller: ProbeHost) -> None:
    # StateSaveLocation belongs to SlurmUser: a file root creates there under a name it can
    # guess can be a symlink planted by SlurmUser. mktemp (O_EXCL, random name) cannot.
    calls = controller.root / "mktemp.calls"
    controller.commands["mktemp"] = (
        f'printf "%s\\n" "$*" >>{shlex.quote(str(calls))}\nexec /usr/bin/mktemp "$@"\n'
    )
    # A symlink at the old scheme's kind of name is never followed nor removed.
    target = controller.root / "victim"
    (controller.state / ".hyperpod-ha-probe.1.1").symlink_to(target)
    before = sorted(p.name for p in controller.state.iterdir())
    report = report_from_result(NODE, CommandResult(controller.run(), None, None, 1, "t"))
    assert report.state_save.writable is True
    in_state = [line for line in calls.read_text().splitlines() if str(controller.state) in line]
    assert in_state == [f"-p {controller.state} .hyperpod-ha-probe.XXXXXXXXXX"]
    assert sorted(p.name for p in controller.state.iterdir()) == before
    assert not target.exists()


def test_probe_runs_the_same_through_its_command_line(controller: ProbeHost) -> None:
    # Fed to bash on stdin: a command reading stdin must not swallow the rest of the script.
    controller.commands["sdiag"] = "cat >/dev/null\necho 'DBD Agent queue size: 7'\n"
    output = parse_probe_output(controller.run(via_command=True))
    assert output.complete
    assert list(output.sections) == list(SECTIONS)
    assert output.sections["sdiag"].text == "DBD Agent queue size: 7"


def test_a_hung_slurmctld_does_not_hang_the_probe(controller: ProbeHost) -> None:
    # scontrol against a stopped slurmctld blocks; the probe kills it at its time limit.
    controller.commands["scontrol"] = controller.commands["scontrol"].replace(
        f"ping) cat '{CAPTURES / 'ping_all_up.txt'}'", "ping) exec sleep 600"
    )
    controller.commands["sinfo"] = "trap '' TERM\nwhile :; do sleep 1; done\n"  # ignores SIGTERM
    controller.env["HYPERPOD_HA_PROBE_TIMEOUT"] = "2"
    text = controller.run(timeout=30)  # a probe that hung would be killed here, failing the test
    output = parse_probe_output(text)
    assert output.complete
    assert output.sections["ping"].ran_out_of_time
    assert output.sections["sinfo"].ran_out_of_time
    assert output.sections["config"].exit_code == 0  # everything else still answered
    report = report_from_result(NODE, CommandResult(text, None, None, 1, "t"))
    assert report.status is ReportStatus.CHECKED
    assert report.ping.error is not None
    assert "timed out" in report.ping.error
    assert report.scheduler.answers is False


def test_a_hung_state_directory_read_is_abandoned(controller: ProbeHost) -> None:
    # od reading the heartbeat on a hung file system: killed, reported as unreadable.
    controller.commands["od"] = "trap '' TERM\nsleep 600\n"
    controller.env["HYPERPOD_HA_PROBE_TIMEOUT"] = "2"
    text = controller.run(timeout=30)  # a probe that hung would be killed here, failing the test
    report = report_from_result(NODE, CommandResult(text, None, None, 1, "t"))
    assert report.heartbeat.readable is False
    assert report.heartbeat.error is not None
    assert "timed out" in report.heartbeat.error
