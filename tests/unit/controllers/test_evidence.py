"""The report's evidence, from the probe's output: each section read, and what a broken one says."""

from __future__ import annotations

import pytest

from hyperpod_ha.controllers.check import check_controller, report_from_result
from hyperpod_ha.controllers.models import ReportStatus
from hyperpod_ha.slurm import ProbeSection
from tests.fakes.canned_runner import CannedRunner
from tests.unit.controllers.cases.probe_outputs import (
    NODE,
    OWN_DOCUMENT,
    capture,
    probe_text,
    result,
    section,
)

# --- the report from the probe's output ---------------------------------------------------


def test_report_of_a_healthy_primary() -> None:
    report = check_controller(
        NODE, CannedRunner(result=result(probe_text())), document=OWN_DOCUMENT, deadline_seconds=60
    )
    assert report.status is ReportStatus.CHECKED
    assert report.reason is None
    assert (report.transport, report.duration_seconds, report.exit_code) == ("fake", 2.5, 0)
    assert (report.node.hostname, report.node.addresses) == ("ctl1", ("10.214.0.11",))
    assert (report.node.controller_index, report.node.controller_name) == (0, "ctl1")
    assert report.config.source == "scontrol"
    assert report.config.slurmctld_timeout == 10
    assert report.config.state_save_location == "/srv/hplab/shared/state"
    # the child (ppid = a slurmctld) and the process of another namespace are not this daemon
    assert (report.slurmctld.running, report.slurmctld.pids, report.slurmctld.threads) == (True, (7841,), 17)
    assert report.slurmdbd.running is False
    assert (report.role.logged, report.role.line_age_seconds) == ("primary", 7)
    assert (report.heartbeat.writer_index, report.heartbeat.age_seconds) == (0, 2)
    assert report.state_save.effectively_writable is True
    assert (report.dbd.reachable, report.dbd.registered_host, report.dbd.registered_port) == (
        True,
        "10.214.0.11",
        6817,
    )
    assert report.scheduler.answers is True
    assert report.notes == ()


def test_merged_output_without_exit_code_reads_the_same() -> None:
    # AWS-StartNonInteractiveCommand: stdout and stderr merged, CRLF from the pty, no exit code.
    merged = result(probe_text().replace("\n", "\r\n"), exit_code=None, stderr=None)
    report = check_controller(NODE, CannedRunner(result=merged), document=OWN_DOCUMENT, deadline_seconds=60)
    assert report.status is ReportStatus.CHECKED
    assert report.role.logged == "primary"
    assert report.exit_code is None


def test_output_that_is_not_the_probe_is_a_failed_probe() -> None:
    runner = CannedRunner(result=result("bash: base64: command not found\n", exit_code=127))
    report = check_controller(NODE, runner, document=OWN_DOCUMENT, deadline_seconds=60)
    assert report.status is ReportStatus.PROBE_FAILED
    assert report.reason is not None
    assert "base64: command not found" in report.reason
    empty = check_controller(
        NODE, CannedRunner(result=result("")), document=OWN_DOCUMENT, deadline_seconds=60
    )
    assert empty.status is ReportStatus.PROBE_FAILED


def test_output_cut_off_before_the_result_line_is_a_failed_probe() -> None:
    text = probe_text()
    cut = text[: text.index("HYPERPOD_HA_PROBE_RESULT")]
    report = report_from_result(NODE, result(cut, exit_code=None))
    assert report.status is ReportStatus.PROBE_FAILED
    assert report.reason == "probe output ends before its result line: cut off or killed"
    assert report.role.logged == "primary"  # the evidence it did print is kept


def test_notes_say_what_timed_out_and_how_the_probe_ended() -> None:
    text = probe_text(ping=section("ping", "", 124, timed_out=True))
    report = report_from_result(NODE, result(text, exit_code=3, stderr="bash: warning\n"))
    assert "ping timed out after 0.0 s" in report.notes
    assert "probe exited 3" in report.notes
    assert "probe stderr: bash: warning" in report.notes
    assert report.ping.error == "scontrol ping: timed out after 0.0 s"


def test_a_stopped_slurmctld() -> None:
    services = "systemctl slurmctld active\nprocess slurmctld pid=7841 state=T ppid=1 threads=17 same_ns=yes"
    report = report_from_result(NODE, result(probe_text(services=section("services", services))))
    assert (report.slurmctld.running, report.slurmctld.stopped, report.slurmctld.process_state) == (
        False,
        True,
        "T",
    )


def test_a_dead_slurmctld_is_not_stopped() -> None:
    services = "systemctl slurmctld failed\nprocess slurmctld pid=7841 state=Z ppid=1 threads=1 same_ns=yes"
    report = report_from_result(NODE, result(probe_text(services=section("services", services))))
    assert (report.slurmctld.running, report.slurmctld.stopped, report.slurmctld.systemctl) == (
        False,
        False,
        "failed",
    )


def test_slurm_conf_when_slurmctld_does_not_answer() -> None:
    text = probe_text(
        config=section(
            "config", "slurm_load_ctl_conf error: Unable to contact slurm controller (connect failure)", 1
        ),
        slurm_conf=section(
            "slurm_conf",
            "path=/opt/slurm/etc/slurm.conf\nSlurmctldHost=ctl1(10.214.0.11)\nSlurmctldHost=ctl2(10.214.0.12)\n"
            "SlurmctldTimeout=10\nStateSaveLocation=/srv/hplab/shared/state",
        ),
    )
    report = report_from_result(NODE, result(text))
    assert report.config.source == "slurm.conf"
    assert report.config.error == (
        "scontrol show config: slurm_load_ctl_conf error: "
        "Unable to contact slurm controller (connect failure)"
    )
    assert report.node.controller_index == 0


def test_the_node_is_found_by_discovery_when_its_own_names_do_not_match() -> None:
    identity = section("identity", "hostname=localhost\naddress=127.0.0.1\nnow=1795995006")
    config = capture("show_config_lab.txt").replace("ctl1(10.214.0.11)", "ip-10-214-0-11")
    report = report_from_result(NODE, result(probe_text(identity=identity, config=section("config", config))))
    assert (report.node.controller_index, report.node.controller_name) == (0, "ip-10-214-0-11")


@pytest.mark.parametrize(
    ("dbd", "reachable", "host", "error"),
    [
        (section("dbd_clusters", capture("sacctmgr_cluster_ctl2.txt")), True, "10.214.0.12", None),
        (section("dbd_clusters", capture("sacctmgr_cluster_none.txt")), True, None, None),
        (
            section("dbd_clusters", capture("sacctmgr_cluster_refused.txt"), 1),
            False,
            None,
            "sacctmgr show cluster: sacctmgr: error: slurm_persist_conn_open_without_init: failed to open "
            "persistent connection to host:10.214.0.5:6819: Connection refused",
        ),
        (
            section("dbd_clusters", "", 124, timed_out=True),
            False,
            None,
            "sacctmgr show cluster: timed out after 0.0 s",
        ),
        (section("dbd_clusters", "bash: sacctmgr: command not found", 127), None, None, None),
        (
            section("dbd_clusters", "other|10.0.0.1|6817"),
            True,
            None,
            "this cluster is not registered with slurmdbd",
        ),
    ],
)
def test_slurmdbd_evidence(
    dbd: ProbeSection, reachable: bool | None, host: str | None, error: str | None
) -> None:
    report = report_from_result(NODE, result(probe_text(dbd_clusters=dbd)))
    assert (report.dbd.reachable, report.dbd.registered_host) == (reachable, host)
    if error is not None or dbd.exit_code != 127:
        assert report.dbd.error == error
    else:
        assert report.dbd.error == "sacctmgr show cluster: command not found on the node"


@pytest.mark.parametrize(
    ("heartbeat", "readable", "error"),
    [
        (section("heartbeat", "", 124, timed_out=True), False, "heartbeat: timed out after 0.0 s"),
        (
            section("heartbeat", "path=/x/heartbeat\nexists=no\nnow=5", 1),
            False,
            "heartbeat file does not exist",
        ),
        (
            section("heartbeat", "error=StateSaveLocation unknown", 2),
            False,
            "heartbeat: StateSaveLocation unknown",
        ),
        (
            section(
                "heartbeat", "path=/x/heartbeat\nexists=yes\nerror=timed out reading the heartbeat file", 124
            ),
            False,
            "heartbeat: timed out reading the heartbeat file",
        ),
        (None, None, "heartbeat: not in the probe output"),
    ],
)
def test_heartbeat_evidence(heartbeat: ProbeSection | None, readable: bool | None, error: str) -> None:
    report = report_from_result(NODE, result(probe_text(heartbeat=heartbeat)))
    assert (report.heartbeat.readable, report.heartbeat.error) == (readable, error)


def test_sinfo_reaching_only_a_standby_backup() -> None:
    report = report_from_result(
        NODE, result(probe_text(sinfo=section("sinfo", capture("sinfo_standby_mode.txt"), 1)))
    )
    assert report.scheduler.answers is False
    assert report.scheduler.error == "sinfo: slurm_load_partitions: Slurm backup controller in standby mode"


def test_a_duplicated_section_is_a_failed_probe_not_a_replaced_one() -> None:
    # A second "services" section (printed by a command inside another section cannot carry the
    # nonce; this is output that is not the probe's own) must not silently replace the first.
    text = probe_text()
    nonce_begin = next(line for line in text.splitlines() if " begin services" in line)
    nonce_end = next(line for line in text.splitlines() if " end services " in line)
    forged = "\n".join([nonce_begin, "process slurmctld pid=1 state=S", nonce_end])
    doubled = text.replace(nonce_end, nonce_end + "\n" + forged, 1)
    report = check_controller(
        NODE, CannedRunner(result=result(doubled)), document=OWN_DOCUMENT, deadline_seconds=60
    )
    assert report.status is ReportStatus.PROBE_FAILED
    assert report.reason is not None
    assert "section 'services' appears twice" in report.reason
    assert (
        check_controller(
            NODE, CannedRunner(result=result(text)), document=OWN_DOCUMENT, deadline_seconds=60
        ).status
        is ReportStatus.CHECKED
    )
