"""What the Session Manager runner tests share: the session, the scripts, the stubbed calls."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from botocore.stub import Stubber

from hyperpod_ha.commands import CommandRequest, CommandResult
from hyperpod_ha.commands.session_manager import SessionManagerRunner
from tests.fakes.ssm_agent import AgentScript, FakeSsmAgent, Step

if TYPE_CHECKING:
    from mypy_boto3_ssm import SSMClient

SESSION_ID = "hyperpod-ha-probe-0a1b2c3d4e5f67890"
TOKEN = "AAEAAZtokenMustNeverLeak0123456789abcdefghijklmnopqrstuvwxyz"
RESUMED = "AAEAAZresumedTokenMustNeverLeak0123456789abcdefghijklmnopqrstuv"
TARGET = "sagemaker-cluster:abcd1234efgh_controller-machine-i-0123456789abcdef0"
DOCUMENT = "HyperPodHA-ControllerProbe"
DEFAULT_DOCUMENT = "AWS-StartNonInteractiveCommand"
# Sequence numbers 0 and 1 are the HandshakeRequest and HandshakeComplete.
FIRST_DATA_SEQUENCE = 2


def script(*steps: Step, **options: object) -> AgentScript:
    return AgentScript(session_id=SESSION_ID, token=TOKEN, steps=steps, **options)  # type: ignore[arg-type]


def expect_start(
    stubber: Stubber,
    stream_url: str,
    *,
    document: str = DOCUMENT,
    parameters: Mapping[str, list[str]] | None = None,
) -> None:
    expected: dict[str, object] = {"Target": TARGET, "DocumentName": document}
    if parameters:
        expected["Parameters"] = dict(parameters)
    stubber.add_response(
        "start_session",
        {"SessionId": SESSION_ID, "TokenValue": TOKEN, "StreamUrl": stream_url},
        expected,
    )


def expect_terminate(stubber: Stubber) -> None:
    stubber.add_response("terminate_session", {"SessionId": SESSION_ID}, {"SessionId": SESSION_ID})


def run(
    ssm: SSMClient,
    *,
    deadline: float = 5.0,
    document: str = DOCUMENT,
    parameters: Mapping[str, list[str]] | None = None,
    max_output_bytes: int = 1 << 20,
) -> CommandResult:
    runner = SessionManagerRunner(ssm, max_output_bytes=max_output_bytes, reconnect_delay=0.01)
    request = CommandRequest(
        target=TARGET, document=document, deadline_seconds=deadline, parameters=parameters or {}
    )
    return runner.run(request)


def run_with_agent(
    agent: FakeSsmAgent,
    ssm: SSMClient,
    stubber: Stubber,
    *,
    terminated: bool = False,
    **options: object,
) -> CommandResult:
    expect_start(stubber, agent.stream_url)
    if terminated:
        expect_terminate(stubber)
    return run(ssm, **options)  # type: ignore[arg-type]


def assert_clean(agent: FakeSsmAgent) -> None:
    assert agent.wait_done()
    assert agent.errors == []
    sent = {sequence for kind, sequence in agent.events if kind == "sent"}
    assert sent, "the agent sent nothing"
    assert set(agent.acks) == sent
