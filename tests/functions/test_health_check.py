"""HealthCheckFunction's handler, with a fake command transport registered by name."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from hyperpod_ha.commands import (
    AccessDenied,
    CommandError,
    CommandRequest,
    CommandResult,
    CommandTimedOut,
    EncryptionRequired,
    ProtocolError,
    TargetUnreachable,
    Throttled,
)
from hyperpod_ha.controllers.errors import ControllerCheckThrottled, ControllerInputError
from hyperpod_ha.controllers.models import REPORT_JSON_LIMIT
from hyperpod_ha.errors import ConfigurationError
from hyperpod_ha.probe import probe_command
from hyperpod_ha.slurm import ProbeSection
from hyperpod_ha_dev import CAPTURES
from hyperpod_ha_dev.embedded.functions import LambdaContext
from hyperpod_ha_dev.simulation.fake_controller import FakeController
from hyperpod_ha_dev.simulation.scenarios import CTL1, CTL2, TOOK_OVER
from tests.conftest import UseTransport, load_function_module
from tests.fakes.canned_runner import CannedRunner
from tests.fakes.probe_output import format_probe_output
from tests.unit.controllers.cases.probe_outputs import CONTROLLER_JSON

TRANSPORT = "test-captured-probe"
OWN_DOCUMENT = "hyperpod-ha-ControllerProbeDocument-1A2B3C"
CONTROLLER = {**CONTROLLER_JSON, "cluster": "lab"}  # the workflow's Map adds the cluster


def capture(name: str) -> str:
    return (CAPTURES / name).read_text().rstrip("\n")


def captured_probe_output() -> str:
    """ctl1's probe output assembled from captured command output (01, 03)."""

    def s(name: str, text: str, rc: int = 0) -> ProbeSection:
        return ProbeSection(name=name, text=text, exit_code=rc, millis=12, timed_out=False, truncated=False)

    beat = " ".join(str(b) for b in (CAPTURES / "heartbeat_writer0.bin").read_bytes())
    return format_probe_output(
        [
            s("identity", "hostname=ctl1\naddress=10.214.0.11\nnow=1795995006"),
            s(
                "services",
                "systemctl slurmctld active\nprocess slurmctld pid=7841 state=S ppid=1 threads=17",
            ),
            s("config", capture("show_config_lab.txt") + "\n" + capture("show_config_accounting_lab.txt")),
            s("ping", capture("ping_all_up.txt")),
            s("sinfo", capture("sinfo_idle.txt")),
            s("sdiag", capture("sdiag_dbd_queue_empty.txt")),
            s("dbd_clusters", capture("sacctmgr_cluster_ctl1.txt")),
            s("dbd_ping", capture("sacctmgr_ping_invalid_keyword.txt"), 1),
            s(
                "role",
                "now_local=2026-11-29T23:30:00\nsource=file:/l\n" + capture("slurmctld_log_ctl1_primary.txt"),
            ),
            s(
                "heartbeat",
                f"path=/s/heartbeat\nexists=yes\nsize=16\nmtime=1795995004\nnow=1795995005\nbytes={beat}",
            ),
            s("state_save", "path=/s\nexists=yes\nmount_target=/srv\nfstype=lustre\nwritable=yes"),
        ]
    )


def answer(stdout: str, exit_code: int | None = 0) -> CannedRunner:
    return CannedRunner(
        result=CommandResult(stdout, None if exit_code is None else "", exit_code, 1.2, TRANSPORT),
        transport=TRANSPORT,
    )


def failing(error: CommandError) -> CannedRunner:
    return CannedRunner(error=error, transport=TRANSPORT)


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """A new container: its settings and runner are made at its first invocation."""
    monkeypatch.setenv("COMMAND_TRANSPORT", TRANSPORT)
    monkeypatch.setenv("PROBE_DOCUMENT", OWN_DOCUMENT)
    monkeypatch.setenv("CLUSTER_NAME", "lab")
    monkeypatch.setenv("CONTROLLER_GROUP", "controller-machine")
    monkeypatch.delenv("PROBE_DEADLINE_SECONDS", raising=False)
    return load_function_module("health_check", fresh=True)


Use = Callable[[CannedRunner], CannedRunner]


@pytest.fixture
def use(use_transport: UseTransport) -> Use:
    """Makes the runner the transport the handler finds by name, for this test only."""

    def register(runner: CannedRunner) -> CannedRunner:
        use_transport(TRANSPORT, runner.factory)
        return runner

    return register


def invoke(app: ModuleType, event: dict[str, Any]) -> dict[str, Any]:
    context = LambdaContext(
        "HealthCheckFunction", "arn:aws:lambda:us-east-1:123456789012:function:hc", 256, 120
    )
    result: dict[str, Any] = app.lambda_handler(event, context)
    return json.loads(json.dumps(result))  # what Lambda hands the state machine


def test_a_healthy_primary(app: ModuleType, use: Use) -> None:
    fake = use(answer(captured_probe_output()))
    report = invoke(app, CONTROLLER)
    assert report["status"] == "CHECKED"
    assert report["instance_id"] == CONTROLLER["instance_id"]
    assert report["node"]["controller_name"] == "ctl1"
    assert report["role"]["logged"] == "primary"
    assert report["heartbeat"]["writer_index"] == 0
    assert report["dbd"]["registered_host"] == "10.214.0.11"
    assert [line["responding"] for line in report["ping"]["lines"]] == [True, True]
    (request,) = fake.requests
    assert (request.target, request.document, request.deadline_seconds) == (
        CONTROLLER["target"],
        OWN_DOCUMENT,
        90,  # the template's value, the default when the variable is missing
    )
    assert dict(request.parameters) == {}  # our Session document fixes the command
    assert len(json.dumps(report)) <= REPORT_JSON_LIMIT


def test_the_runner_is_made_once_per_container(app: ModuleType, use: Use) -> None:
    fake = use(answer(captured_probe_output()))
    invoke(app, CONTROLLER)
    invoke(app, CONTROLLER)
    assert fake.made == 1
    assert len(fake.requests) == 2


def test_the_aws_document_gets_the_probe_command_and_merged_output(
    app: ModuleType, monkeypatch: pytest.MonkeyPatch, use: Use
) -> None:
    monkeypatch.setenv("PROBE_DOCUMENT", "AWS-StartNonInteractiveCommand")
    monkeypatch.setenv("PROBE_DEADLINE_SECONDS", "45")
    fake = use(answer(captured_probe_output().replace("\n", "\r\n"), exit_code=None))
    report = invoke(app, CONTROLLER)
    (request,) = fake.requests
    assert dict(request.parameters) == {"command": [probe_command()]}
    assert request.deadline_seconds == 45
    assert report["status"] == "CHECKED"
    assert report["exit_code"] is None


@pytest.mark.parametrize("raw", ["soon", "0", "-5"])
def test_a_bad_deadline_is_a_configuration_error(
    app: ModuleType, monkeypatch: pytest.MonkeyPatch, raw: str, use: Use
) -> None:
    monkeypatch.setenv("PROBE_DEADLINE_SECONDS", raw)
    use(answer(captured_probe_output()))
    with pytest.raises(ConfigurationError):
        invoke(app, CONTROLLER)


def test_a_missing_document_fails_the_first_invocation_whatever_the_event(
    app: ModuleType, monkeypatch: pytest.MonkeyPatch, use: Use
) -> None:
    monkeypatch.delenv("PROBE_DOCUMENT")
    fake = use(answer(captured_probe_output()))
    with pytest.raises(ConfigurationError, match="PROBE_DOCUMENT is not set"):
        invoke(app, {})  # not a controller either: the settings are read first
    assert fake.made == 0


def test_a_node_that_is_not_running_is_reported_without_probing(app: ModuleType, use: Use) -> None:
    fake = use(answer(captured_probe_output()))
    report = invoke(app, {**CONTROLLER, "status": "Pending"})
    assert fake.requests == []
    assert (report["status"], report["reason"]) == ("NOT_RUNNING", "node status is Pending: not probed")


@pytest.mark.parametrize(
    "error",
    [
        TargetUnreachable("TargetNotConnected: not connected"),
        CommandTimedOut("session did not finish within 60 s"),
        AccessDenied("AccessDeniedException"),
        ProtocolError("channel closed early"),
        EncryptionRequired("KMS encryption requested"),
    ],
)
def test_unreachable_is_a_report(app: ModuleType, error: CommandError, use: Use) -> None:
    use(failing(error))
    report = invoke(app, CONTROLLER)
    assert report["status"] == "UNREACHABLE"
    assert report["reason"] == f"{type(error).__name__}: {error.reason}"


def test_throttling_raises_the_error_the_state_machine_retries(app: ModuleType, use: Use) -> None:
    use(failing(Throttled("ThrottlingException: Rate exceeded")))
    with pytest.raises(ControllerCheckThrottled) as raised:
        invoke(app, CONTROLLER)
    # Lambda's errorType is the class name; the Retry in the state machine matches it.
    assert type(raised.value).__name__ == "ControllerCheckThrottled"


@pytest.mark.parametrize("event", [{}, {"instance_id": "i-1"}, {**CONTROLLER, "target": None}])
def test_a_malformed_controller_is_rejected(app: ModuleType, event: dict[str, Any], use: Use) -> None:
    use(answer(captured_probe_output()))
    with pytest.raises(ControllerInputError):
        invoke(app, event)


@pytest.fixture
def ctl2(tmp_path: Path) -> Iterator[FakeController]:
    """ctl2 after the failover (04), as the simulation shows it."""
    node = FakeController(tmp_path / "ctl2", CTL2, (CTL1, CTL2), CAPTURES, tmp_path / "fsx" / "state")
    node.apply(TOOK_OVER)
    yield node
    node.close()


def test_the_probe_command_runs_without_a_shell(
    app: ModuleType, monkeypatch: pytest.MonkeyPatch, ctl2: FakeController, use: Use
) -> None:
    """The command the handler passes is split like the SSM agent does and run: real bash, fake Slurm."""
    monkeypatch.setenv("PROBE_DOCUMENT", "AWS-StartNonInteractiveCommand")

    def run_on_ctl2(request: CommandRequest) -> CommandResult:
        done = ctl2.run(request.parameters["command"][0], deadline_seconds=60)
        return CommandResult(done.stdout + done.stderr, None, None, 1.0, TRANSPORT)  # merged, no exit code

    use(CannedRunner(respond=run_on_ctl2, transport=TRANSPORT))
    report = invoke(app, {**CONTROLLER, "private_ip": "10.214.0.12", "hostname": "ctl2"})
    assert report["status"] == "CHECKED"
    assert report["node"]["controller_name"] == "ctl2"
    assert [line["responding"] for line in report["ping"]["lines"]] == [False, True]
    assert report["config"]["state_save_location"] == str(ctl2.state_dir)
    assert report["dbd"]["registered_host"] == "10.214.0.12"
    assert (report["heartbeat"]["readable"], report["heartbeat"]["writer_index"]) == (True, 1)
    assert report["state_save"]["writable"] is True
    assert report["scheduler"]["answers"] is True
    assert sorted(p.name for p in ctl2.state_dir.iterdir()) == ["heartbeat"]


def test_a_node_of_another_group_is_refused_before_any_command(app: ModuleType, use: Use) -> None:
    from hyperpod_ha.controllers.targets import ForeignControllerRejected

    runner = use(answer(captured_probe_output()))
    with pytest.raises(ForeignControllerRejected):
        invoke(app, {**CONTROLLER, "group": "worker-group"})
    assert runner.requests == []
