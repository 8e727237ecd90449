"""The probe script on a fake controller where something is missing, stopped or broken."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

from hyperpod_ha.commands import CommandResult
from hyperpod_ha.controllers.check import report_from_result
from hyperpod_ha.controllers.models import ReportStatus
from hyperpod_ha.slurm import parse_probe_output, parse_services
from tests.fakes.probe_host import NODE, ProbeHost, prints


def test_unwritable_state_save_location(controller: ProbeHost) -> None:
    # /proc/1 exists, and nobody (root included) can create a file in it.
    (controller.root / "show_config.txt").write_text(controller.show_config(state=Path("/proc/1")))
    report = report_from_result(NODE, CommandResult(controller.run(), None, None, 1, "t"))
    assert report.state_save.exists is True
    assert report.state_save.writable is False
    assert report.state_save.write_error == "No such file or directory"
    assert report.state_save.fstype == "proc"
    assert report.heartbeat.readable is False
    assert report.heartbeat.error == "heartbeat file does not exist"


def test_slurm_conf_stands_in_when_slurmctld_does_not_answer(controller: ProbeHost) -> None:
    controller.commands["scontrol"] = (
        'case "$1" in\n'
        f"  ping) {prints('ping_both_down.txt', 1)};;\n"
        "  show) echo 'slurm_load_ctl_conf error: Unable to contact slurm controller'; exit 1;;\n"
        "esac\n"
    )
    conf = controller.root / "slurm.conf"
    conf.write_text(
        "ClusterName=lab\n"
        "SlurmctldHost=ctl1(10.214.0.11)\n"
        "SlurmctldHost=ctl2(10.214.0.12)\n"
        "SlurmctldTimeout=10\n"
        f"StateSaveLocation={controller.state}  # shared\n"
        f"SlurmctldLogFile={controller.log}\n"
        "NodeName=node[1-2] CPUs=1\n"
    )
    controller.env["SLURM_CONF"] = str(conf)
    report = report_from_result(NODE, CommandResult(controller.run(), None, None, 1, "t"))
    assert report.config.source == "slurm.conf"
    assert report.config.error is not None
    assert "slurm_load_ctl_conf error: Unable to contact slurm controller" in report.config.error
    assert [c.name for c in report.config.controllers] == ["ctl1", "ctl2"]
    assert report.heartbeat.writer_index == 0  # found through slurm.conf's StateSaveLocation
    assert report.role.logged == "primary"
    assert [p.responding for p in report.ping.lines] == [False, False]


def test_role_from_the_journal_when_there_is_no_log_file(controller: ProbeHost) -> None:
    (controller.root / "show_config.txt").write_text(
        controller.show_config().replace(
            f"SlurmctldLogFile        = {controller.log}", "SlurmctldLogFile        = (null)"
        )
    )
    # journalctl -r prints the newest line first
    controller.commands["journalctl"] = (
        "echo '2026-11-29T23:30:42+0000 ctl2 slurmctld[7891]: Running as primary controller'\n"
        "echo '2026-11-29T23:30:41+0000 ctl2 slurmctld[7891]: error: ControlMachine ctl1 not responding, "
        "BackupController1 ctl2 taking over'\n"
        "echo '2026-11-29T23:29:53+0000 ctl2 slurmctld[7891]: slurmctld running in background mode'\n"
    )
    report = report_from_result(NODE, CommandResult(controller.run(), None, None, 1, "t"))
    assert report.role.source == "journal:slurmctld"
    assert report.role.logged == "primary"


def test_without_pgrep_and_systemctl_the_probe_reads_proc(controller: ProbeHost) -> None:
    del controller.commands["pgrep"]
    del controller.commands["systemctl"]
    # A process whose name is slurmctld, found by scanning /proc; the node's Slurm binary (a copy
    # of sleep) is the slurmctld on its PATH, as without systemd nothing else names it.
    controller.bin.mkdir()
    daemon_binary = controller.bin / "slurmctld"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", daemon_binary)
    daemon = subprocess.Popen([str(daemon_binary), "30"])
    try:
        text = controller.run(restricted_path=True)
    finally:
        daemon.send_signal(signal.SIGKILL)
        daemon.wait()
    output = parse_probe_output(text)
    services = parse_services(output.sections["services"].text)
    assert services.systemctl == {"slurmctld": "unavailable", "slurmdbd": "unavailable"}
    mine = [p for p in services.processes if p.pid == daemon.pid]
    assert len(mine) == 1
    assert mine[0].same_namespace is True
    report = report_from_result(NODE, CommandResult(text, None, None, 1, "t"))
    assert daemon.pid in report.slurmctld.pids
    assert report.slurmctld.running is True


def test_a_stopped_slurmctld_is_seen_stopped(controller: ProbeHost) -> None:
    assert controller.daemon is not None
    os.kill(controller.daemon.pid, signal.SIGSTOP)
    try:
        report = report_from_result(NODE, CommandResult(controller.run(), None, None, 1, "t"))
    finally:
        os.kill(controller.daemon.pid, signal.SIGCONT)
    assert report.slurmctld.running is False
    assert report.slurmctld.stopped is True
    assert report.slurmctld.process_state == "T"


def test_slurmdbd_down_and_the_agent_queue(controller: ProbeHost) -> None:
    controller.commands["sacctmgr"] = (
        f'case "$*" in\n  *ping*) {prints("sacctmgr_ping_refused.txt", 1)};;\n'
        f"  *) {prints('sacctmgr_cluster_refused.txt', 1)};;\nesac\n"
    )
    controller.commands["sdiag"] = prints("sdiag_dbd_queue_growing.txt")
    report = report_from_result(NODE, CommandResult(controller.run(), None, None, 1, "t"))
    assert report.dbd.reachable is False
    assert report.dbd.error is not None
    assert report.dbd.error.endswith("Connection refused")
    assert report.dbd.agent_queue_size == 3
    assert report.dbd.ping_supported is False


def test_long_output_is_truncated_and_marked(controller: ProbeHost) -> None:
    controller.commands["sinfo"] = 'for i in $(seq 1 3000); do echo "idle $i"; done\n'
    output = parse_probe_output(controller.run())
    assert output.sections["sinfo"].truncated
    assert len(output.sections["sinfo"].text) <= 12288


def test_a_probe_that_cannot_start_says_why(controller: ProbeHost) -> None:
    controller.env["TMPDIR"] = str(controller.root / "no-such-directory")
    text = controller.run(exit_code=70)
    output = parse_probe_output(text)
    assert not output.complete
    assert output.error == "cannot create a temporary directory"
    report = report_from_result(NODE, CommandResult(text, "", 70, 0.1, "t"))
    assert report.status is ReportStatus.PROBE_FAILED
    assert report.reason == "probe failed on the node: cannot create a temporary directory"


def test_a_heartbeat_replaced_between_the_look_and_the_read_is_read_again(controller: ProbeHost) -> None:
    # Slurm 24.11 replaces the file (heartbeat.new, unlink, link): seen on the lab, the file
    # was there for `test -e` and gone for `stat`. Each read fails once, as if it was gone.
    for tool in ("stat", "od"):
        marker = controller.root / f"{tool}-failed-once"
        controller.commands[tool] = (
            f'case "$*" in *heartbeat*) [ -e {marker} ] || {{ touch {marker}; exit 1; }};; esac\n'
            f'exec /usr/bin/{tool} "$@"\n'
        )
    report = report_from_result(NODE, CommandResult(controller.run(), None, None, 1, "t"))
    assert report.heartbeat.readable is True
    assert report.heartbeat.writer_index == 0
    assert all((controller.root / f"{tool}-failed-once").exists() for tool in ("stat", "od"))
