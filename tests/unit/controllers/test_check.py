"""Checking one controller: the controller handed in, the probe's request, unreachable nodes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hyperpod_ha.commands import (
    AccessDenied,
    CommandError,
    CommandTimedOut,
    EncryptionRequired,
    HandshakeTimedOut,
    ProtocolError,
    TargetUnreachable,
    Throttled,
)
from hyperpod_ha.controllers.check import check_controller, probe_parameters
from hyperpod_ha.controllers.errors import ControllerCheckThrottled, ControllerInputError
from hyperpod_ha.controllers.models import Controller, ReportStatus
from hyperpod_ha.probe import probe_command
from tests.fakes.canned_runner import CannedRunner
from tests.unit.controllers.cases.probe_outputs import (
    CONTROLLER_JSON,
    NODE,
    OWN_DOCUMENT,
    probe_text,
    result,
)

# --- the controller handed in -------------------------------------------------------------


def test_controller_from_discovery_json_ignores_extra_keys() -> None:
    node = Controller.from_json({**CONTROLLER_JSON, "cluster": "lab", "private_ip": None})
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
        Controller.from_json(data)


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
    runner = CannedRunner(result=result(probe_text()))
    check_controller(NODE, runner, document=document, deadline_seconds=45)
    (request,) = runner.requests
    assert request.target == NODE.target
    assert request.document == document
    assert request.deadline_seconds == 45
    assert dict(request.parameters) == parameters
    assert probe_parameters(document) == parameters


def test_a_node_that_is_not_running_is_not_probed() -> None:
    runner = CannedRunner(result=result(probe_text()))
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
    report = check_controller(NODE, CannedRunner(error=error), document=OWN_DOCUMENT, deadline_seconds=60)
    assert report.status is ReportStatus.UNREACHABLE
    assert report.reason == f"{type(error).__name__}: {error.reason}"
    assert report.transport == "fake"
    assert report.instance_id == NODE.instance_id


def test_throttling_is_raised_for_the_state_machine_retry() -> None:
    runner = CannedRunner(error=Throttled("ThrottlingException on StartSession"))
    with pytest.raises(ControllerCheckThrottled) as raised:
        check_controller(NODE, runner, document=OWN_DOCUMENT, deadline_seconds=60)
    assert type(raised.value).__name__ == "ControllerCheckThrottled"
    assert "ThrottlingException" in str(raised.value)
