"""One controller's report: the probe run through a CommandRunner, its output turned into evidence."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hyperpod_ha.commands import (
    AccessDenied,
    CommandError,
    CommandRequest,
    CommandResult,
    CommandTimedOut,
    EncryptionRequired,
    HandshakeTimedOut,
    ProtocolError,
    TargetUnreachable,
    Throttled,
)
from hyperpod_ha.health import (
    LIST_LIMIT,
    REPORT_JSON_LIMIT,
    ControllerCheckThrottled,
    ControllerInputError,
    ControllerNode,
    ControllerReport,
    ReportRejected,
    ReportStatus,
    check_controller,
    probe_parameters,
    report_from_result,
)
from hyperpod_ha.probe import probe_command
from hyperpod_ha.slurm import TEXT_LIMIT, ProbeSection
from hyperpod_ha_dev import CAPTURES
from tests.fakes.probe_output import format_probe_output

OWN_DOCUMENT = "hyperpod-ha-ControllerProbeDocument-abc"

CONTROLLER_JSON = {
    "instance_id": "i-0aaaaaaaaaaaaaaa1",
    "group": "controller-machine",
    "status": "Running",
    "private_ip": "10.214.0.11",
    "hostname": "ip-10-214-0-11",
    "target": "sagemaker-cluster:hplab0000001_controller-machine-i-0aaaaaaaaaaaaaaa1",
}
NODE = ControllerNode.from_json(CONTROLLER_JSON)


def capture(name: str) -> str:
    return (CAPTURES / name).read_text().rstrip("\n")


def section(name: str, text: str, rc: int = 0, *, timed_out: bool = False) -> ProbeSection:
    return ProbeSection(name=name, text=text, exit_code=rc, millis=20, timed_out=timed_out, truncated=False)


def primary_sections() -> dict[str, ProbeSection]:
    """ctl1 as the captures show it with everything up (01, 03)."""
    beat = " ".join(str(b) for b in (CAPTURES / "heartbeat_writer0.bin").read_bytes())
    return {
        s.name: s
        for s in [
            section(
                "identity", "hostname=ctl1\nfqdn=ctl1\naddress=127.0.0.1\naddress=10.214.0.11\nnow=1795995006"
            ),
            section(
                "services",
                "systemctl slurmctld active\n"
                "process slurmctld pid=7841 state=S ppid=1 threads=17 same_ns=yes\n"
                "process slurmctld pid=7842 state=S ppid=7841 threads=1 same_ns=yes\n"
                "process slurmctld pid=7891 state=S ppid=1 threads=5 same_ns=no\n"
                "systemctl slurmdbd inactive",
            ),
            section("slurm_conf", "path=", 1),
            section(
                "config",
                capture("show_config_lab.txt")
                + "\n"
                + capture("show_config_accounting_lab.txt")
                + "\nSlurmctldLogFile        = /var/log/slurm/slurmctld.log",
            ),
            section("ping", capture("ping_all_up.txt")),
            section("sinfo", capture("sinfo_idle.txt")),
            section("sdiag", capture("sdiag_dbd_queue_empty.txt")),
            section("dbd_clusters", capture("sacctmgr_cluster_ctl1.txt")),
            section("dbd_ping", capture("sacctmgr_ping_invalid_keyword.txt"), 1),
            section(
                "role",
                "now_local=2026-11-29T23:30:00\nsource=file:/var/log/slurm/slurmctld.log\n"
                + capture("slurmctld_log_ctl1_primary.txt"),
            ),
            section(
                "heartbeat",
                "path=/srv/hplab/shared/state/heartbeat\nexists=yes\nsize=16\nmtime=1795995004\n"
                f"now=1795995006\nbytes={beat}",
            ),
            section(
                "state_save",
                "path=/srv/hplab/shared/state\nexists=yes\nowner=root\nmode=755\nmount_target=/srv\n"
                "fstype=lustre\nsource=10.214.0.5@tcp:/fsx\nwritable=yes",
            ),
        ]
    }


def probe_text(**changes: ProbeSection | None) -> str:
    sections = primary_sections()
    for name, changed in changes.items():
        if changed is None:
            del sections[name]
        else:
            sections[name] = changed
    return format_probe_output(sections.values())


@dataclass
class FakeRunner:
    """Returns one canned result (or raises one error) and remembers the requests."""

    result: CommandResult | None = None
    error: CommandError | None = None
    transport: str = "fake"
    requests: list[CommandRequest] = field(default_factory=list)

    def run(self, request: CommandRequest) -> CommandResult:
        self.requests.append(request)
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


def result(stdout: str, *, exit_code: int | None = 0, stderr: str | None = "") -> CommandResult:
    return CommandResult(
        stdout=stdout, stderr=stderr, exit_code=exit_code, duration_seconds=2.5, transport="fake"
    )


# --- the controller handed in -------------------------------------------------------------


def test_controller_from_discovery_json_ignores_extra_keys() -> None:
    node = ControllerNode.from_json({**CONTROLLER_JSON, "cluster": "lab", "private_ip": None})
    assert node.instance_id == "i-0aaaaaaaaaaaaaaa1"
    assert node.private_ip is None


@pytest.mark.parametrize(
    "data",
    [
        None,
        [],
        {key: value for key, value in CONTROLLER_JSON.items() if key != "target"},
        {**CONTROLLER_JSON, "instance_id": ""},
        {**CONTROLLER_JSON, "status": 3},
        {**CONTROLLER_JSON, "hostname": ["x"]},
    ],
)
def test_controller_from_json_rejects(data: object) -> None:
    with pytest.raises(ControllerInputError):
        ControllerNode.from_json(data)


# --- running the probe --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "parameters"),
    [
        (OWN_DOCUMENT, {}),
        ("AWS-StartNonInteractiveCommand", {"command": [probe_command()]}),
        ("AWS-RunShellScript", {"commands": [probe_command()]}),
    ],
)
def test_the_request_for_each_document(document: str, parameters: dict[str, list[str]]) -> None:
    runner = FakeRunner(result=result(probe_text()))
    check_controller(NODE, runner, document=document, deadline_seconds=45)
    (request,) = runner.requests
    assert request.target == NODE.target
    assert request.document == document
    assert request.deadline_seconds == 45
    assert dict(request.parameters) == parameters
    assert probe_parameters(document) == parameters


def test_a_node_that_is_not_running_is_not_probed() -> None:
    runner = FakeRunner(result=result(probe_text()))
    node = replace(NODE, status="ShuttingDown")
    report = check_controller(node, runner, document=OWN_DOCUMENT, deadline_seconds=60)
    assert runner.requests == []
    assert report.status is ReportStatus.NOT_RUNNING
    assert report.reason == "node status is ShuttingDown: not probed"
    assert report.node_status == "ShuttingDown"


@pytest.mark.parametrize(
    "error",
    [
        TargetUnreachable("TargetNotConnected: i-0aaaaaaaaaaaaaaa1 is not connected"),
        AccessDenied("AccessDeniedException on StartSession"),
        CommandTimedOut("session s-1 did not finish within 60 s"),
        ProtocolError("channel closed before the exit code"),
        HandshakeTimedOut("no handshake within 15 s"),
        EncryptionRequired("the session asks for KMS encryption"),
        CommandError("command c-1 ended Cancelled/Cancelled"),
    ],
)
def test_unreachable_controllers_are_reports_not_errors(error: CommandError) -> None:
    report = check_controller(NODE, FakeRunner(error=error), document=OWN_DOCUMENT, deadline_seconds=60)
    assert report.status is ReportStatus.UNREACHABLE
    assert report.reason == f"{type(error).__name__}: {error.reason}"
    assert report.transport == "fake"
    assert report.instance_id == NODE.instance_id


def test_throttling_is_raised_for_the_state_machine_retry() -> None:
    runner = FakeRunner(error=Throttled("ThrottlingException on StartSession"))
    with pytest.raises(ControllerCheckThrottled) as raised:
        check_controller(NODE, runner, document=OWN_DOCUMENT, deadline_seconds=60)
    assert type(raised.value).__name__ == "ControllerCheckThrottled"
    assert "ThrottlingException" in str(raised.value)


# --- the report from the probe's output ---------------------------------------------------


def test_report_of_a_healthy_primary() -> None:
    report = check_controller(
        NODE, FakeRunner(result=result(probe_text())), document=OWN_DOCUMENT, deadline_seconds=60
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
    report = check_controller(NODE, FakeRunner(result=merged), document=OWN_DOCUMENT, deadline_seconds=60)
    assert report.status is ReportStatus.CHECKED
    assert report.role.logged == "primary"
    assert report.exit_code is None


def test_output_that_is_not_the_probe_is_a_failed_probe() -> None:
    runner = FakeRunner(result=result("bash: base64: command not found\n", exit_code=127))
    report = check_controller(NODE, runner, document=OWN_DOCUMENT, deadline_seconds=60)
    assert report.status is ReportStatus.PROBE_FAILED
    assert report.reason is not None
    assert "base64: command not found" in report.reason
    empty = check_controller(NODE, FakeRunner(result=result("")), document=OWN_DOCUMENT, deadline_seconds=60)
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


# --- the report as JSON -------------------------------------------------------------------


def test_report_json_round_trip() -> None:
    report = report_from_result(NODE, result(probe_text()))
    data = json.loads(json.dumps(report.to_json()))
    assert data["status"] == "CHECKED"
    assert ControllerReport.from_json(data) == report
    unreachable = check_controller(
        NODE, FakeRunner(error=TargetUnreachable("gone")), document="d", deadline_seconds=1
    )
    assert ControllerReport.from_json(json.loads(json.dumps(unreachable.to_json()))) == unreachable


@pytest.mark.parametrize(
    "data",
    [
        "report",
        {"status": "CHECKED"},
        {"instance_id": "i-1", "status": "FINE"},
        {"instance_id": "i-1", "status": "CHECKED", "exit_code": "0"},
        {"instance_id": "i-1", "status": "CHECKED", "exit_code": True},
        {"instance_id": "i-1", "status": "CHECKED", "ping": {"lines": [{"host": "a"}]}},
        {"instance_id": "i-1", "status": "CHECKED", "notes": "x"},
        {"instance_id": 5, "status": "CHECKED"},
    ],
)
def test_report_from_json_rejects(data: object) -> None:
    with pytest.raises(ReportRejected):
        ControllerReport.from_json(data)


def test_report_json_is_bounded() -> None:
    """Every text cut to TEXT_LIMIT, every list to LIST_LIMIT: the JSON stays under REPORT_JSON_LIMIT."""
    long = "x" * 5000
    huge = {
        "instance_id": long,
        "status": "CHECKED",
        "group": long,
        "node_status": long,
        "hostname": long,
        "private_ip": long,
        "target": long,
        "reason": long,
        "transport": long,
        "node": {"hostname": long, "addresses": [long] * 100},
        "config": {
            "source": long,
            "cluster_name": long,
            "controllers": [{"index": i, "name": long, "address": long} for i in range(100)],
            "state_save_location": long,
            "log_file": long,
            "version": long,
            "error": long,
        },
        "ping": {"lines": [{"host": long, "label": "primary", "responding": True}] * 100, "error": long},
        "slurmctld": {"pids": list(range(100)), "systemctl": long, "process_state": long},
        "slurmdbd": {"pids": list(range(100)), "systemctl": long, "process_state": long},
        "role": {"logged": long, "line": long, "source": long, "error": long},
        "heartbeat": {"path": long, "error": long},
        "state_save": {
            "path": long,
            "mount_target": long,
            "fstype": long,
            "write_error": long,
            "error": long,
        },
        "dbd": {"registered_host": long, "error": long},
        "scheduler": {"node_states": [{"state": long, "count": 1}] * 100, "error": long},
        "notes": [long] * 100,
    }
    report = ControllerReport.from_json(huge)
    assert len(report.notes) == LIST_LIMIT
    assert len(report.reason or "") == TEXT_LIMIT
    assert len(json.dumps(report.to_json())) <= REPORT_JSON_LIMIT


@settings(max_examples=200)
@given(st.text(), st.one_of(st.none(), st.integers(-1, 255)))
def test_any_output_gives_a_report(stdout: str, exit_code: int | None) -> None:
    report = report_from_result(NODE, result(stdout, exit_code=exit_code))
    assert report.status in (ReportStatus.CHECKED, ReportStatus.PROBE_FAILED)
    assert len(json.dumps(report.to_json())) <= REPORT_JSON_LIMIT


section_names = st.sampled_from(sorted(primary_sections()))


@settings(max_examples=200)
@given(st.dictionaries(section_names, st.tuples(st.text(max_size=200), st.integers(0, 140), st.booleans())))
def test_any_section_content_gives_a_report(changes: dict[str, tuple[str, int, bool]]) -> None:
    sections = {
        name: section(name, text.replace("@@hyperpod-ha", "@@"), rc, timed_out=to)
        for name, (text, rc, to) in changes.items()
    }
    report = report_from_result(NODE, result(probe_text(**sections)))
    assert report.status is ReportStatus.CHECKED
    assert ControllerReport.from_json(json.loads(json.dumps(report.to_json()))) == report
