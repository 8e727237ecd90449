"""RunCommandRunner: moto for the happy path, Stubber for statuses moto never reports."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws

from hyperpod_ha.commands import (
    AccessDenied,
    CommandError,
    CommandRequest,
    CommandTimedOut,
    InvalidCommandRequest,
    TargetUnreachable,
    Throttled,
)
from hyperpod_ha.commands.run_command import RunCommandRunner

if TYPE_CHECKING:
    from mypy_boto3_ssm import SSMClient

INSTANCE = "i-0123456789abcdef0"
COMMAND_ID = "5e9c2a84-7b1f-4a0e-9a53-2f1d4c6b8e01"
DOCUMENT = "AWS-RunShellScript"
PARAMETERS = {"commands": ["scontrol ping"]}


class FakeClock:
    """Time that moves only when the runner sleeps, so polling is deterministic and instant."""

    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def request(deadline: float = 10.0, target: str = INSTANCE) -> CommandRequest:
    return CommandRequest(target=target, document=DOCUMENT, deadline_seconds=deadline, parameters=PARAMETERS)


def runner(ssm: SSMClient, clock: FakeClock, poll_seconds: float = 1.0) -> RunCommandRunner:
    return RunCommandRunner(ssm, poll_seconds=poll_seconds, clock=clock, sleep=clock.sleep)


def expect_send(stubber: Stubber, timeout_seconds: int = 30) -> None:
    stubber.add_response(
        "send_command",
        {"Command": {"CommandId": COMMAND_ID, "DocumentName": DOCUMENT, "Status": "Pending"}},
        {
            "InstanceIds": [INSTANCE],
            "DocumentName": DOCUMENT,
            "Parameters": PARAMETERS,
            "TimeoutSeconds": timeout_seconds,
        },
    )


def expect_invocation(stubber: Stubber, status: str, details: str | None = None, **fields: Any) -> None:
    response: dict[str, Any] = {
        "CommandId": COMMAND_ID,
        "InstanceId": INSTANCE,
        "DocumentName": DOCUMENT,
        "Status": status,
        "StatusDetails": details or status,
    }
    response.update(fields)
    stubber.add_response(
        "get_command_invocation", response, {"CommandId": COMMAND_ID, "InstanceId": INSTANCE}
    )


def test_success_on_moto() -> None:
    with mock_aws():
        ssm = boto3.client("ssm", region_name="eu-west-1")
        result = RunCommandRunner(ssm, poll_seconds=0.01).run(request())

        assert (result.stdout, result.stderr, result.exit_code) == ("", "", 0)
        assert result.transport == "run-command"
        (command,) = ssm.list_commands()["Commands"]
        assert command["DocumentName"] == DOCUMENT
        assert command["Parameters"] == PARAMETERS
        assert command["InstanceIds"] == [INSTANCE]


def test_polls_through_missing_and_running_invocations(
    ssm: SSMClient, stubber: Stubber, clock: FakeClock, ssm_calls: list[str]
) -> None:
    expect_send(stubber)
    stubber.add_client_error("get_command_invocation", "InvocationDoesNotExist", "not yet")
    expect_invocation(stubber, "Pending")
    expect_invocation(stubber, "InProgress")
    expect_invocation(
        stubber,
        "Success",
        ResponseCode=0,
        StandardOutputContent="Slurmctld(primary) at ip-10-1-0-1 is UP\n",
        StandardErrorContent="",
    )

    result = runner(ssm, clock).run(request())

    assert result.stdout == "Slurmctld(primary) at ip-10-1-0-1 is UP\n"
    assert (result.stderr, result.exit_code) == ("", 0)
    assert result.duration_seconds == 3.0
    assert clock.sleeps == [1.0, 1.0, 1.0]
    assert ssm_calls == ["SendCommand"] + ["GetCommandInvocation"] * 4


def test_failed_command_is_a_result_with_its_exit_code(
    ssm: SSMClient, stubber: Stubber, clock: FakeClock
) -> None:
    expect_send(stubber)
    expect_invocation(
        stubber,
        "Failed",
        ResponseCode=2,
        StandardOutputContent="",
        StandardErrorContent="slurm_load_ctl_conf error\n",
    )

    result = runner(ssm, clock).run(request())

    assert result.exit_code == 2
    assert result.stderr == "slurm_load_ctl_conf error\n"


def test_deadline_cancels_the_command(
    ssm: SSMClient, stubber: Stubber, clock: FakeClock, ssm_calls: list[str]
) -> None:
    expect_send(stubber)
    for _ in range(4):  # at 0, 0.4, 0.8 and the deadline, 1.0
        expect_invocation(stubber, "InProgress")
    stubber.add_response("cancel_command", {}, {"CommandId": COMMAND_ID, "InstanceIds": [INSTANCE]})

    with pytest.raises(CommandTimedOut, match="within 1 s; cancelled"):
        runner(ssm, clock, poll_seconds=0.4).run(request(deadline=1.0))

    assert clock.sleeps == pytest.approx([0.4, 0.4, 0.2])
    assert ssm_calls[-1] == "CancelCommand"


def test_failed_cancel_still_reports_the_timeout(ssm: SSMClient, stubber: Stubber, clock: FakeClock) -> None:
    expect_send(stubber)
    expect_invocation(stubber, "Delayed")
    expect_invocation(stubber, "Delayed")
    stubber.add_client_error("cancel_command", "InvalidCommandId", "gone")

    with pytest.raises(CommandTimedOut):
        runner(ssm, clock).run(request(deadline=0.5))


@pytest.mark.parametrize(
    ("status", "details", "error_type", "message"),
    [
        ("TimedOut", "ExecutionTimedOut", CommandTimedOut, "execution timeout"),
        ("TimedOut", "DeliveryTimedOut", TargetUnreachable, "did not take the command"),
        ("Failed", "Undeliverable", TargetUnreachable, "did not take the command"),
        ("Failed", "AccessDenied", AccessDenied, "refused"),
        ("Failed", "InvalidPlatform", CommandError, "Failed/InvalidPlatform"),
        ("Failed", "Terminated", CommandError, "Failed/Terminated"),
        ("Cancelled", "Canceled", CommandError, "cancelled outside this runner"),
        ("Cancelling", "Cancelling", CommandError, "cancelled outside this runner"),
    ],
)
def test_statuses_that_are_not_results(
    ssm: SSMClient,
    stubber: Stubber,
    clock: FakeClock,
    *,
    status: str,
    details: str,
    error_type: type[CommandError],
    message: str,
) -> None:
    expect_send(stubber)
    expect_invocation(stubber, status, details, ResponseCode=-1)

    with pytest.raises(error_type, match=message) as raised:
        runner(ssm, clock).run(request())

    assert type(raised.value) is error_type
    assert COMMAND_ID in raised.value.reason


@pytest.mark.parametrize(
    ("code", "error_type"),
    [
        ("InvalidInstanceId", TargetUnreachable),
        ("AccessDeniedException", AccessDenied),
        ("ThrottlingException", Throttled),
        ("InvalidDocument", CommandError),
    ],
)
def test_send_command_errors(
    ssm: SSMClient, stubber: Stubber, clock: FakeClock, code: str, error_type: type[CommandError]
) -> None:
    stubber.add_client_error("send_command", code, "no")

    with pytest.raises(error_type, match=f"SendCommand for {INSTANCE} failed: {code}") as raised:
        runner(ssm, clock).run(request())

    assert type(raised.value) is error_type


def test_invocation_errors_other_than_not_yet_are_raised(
    ssm: SSMClient, stubber: Stubber, clock: FakeClock
) -> None:
    expect_send(stubber)
    stubber.add_client_error("get_command_invocation", "InvalidCommandId", "unknown")

    with pytest.raises(CommandError, match=r"GetCommandInvocation for .* InvalidCommandId"):
        runner(ssm, clock).run(request())


def test_long_deadline_extends_the_delivery_timeout(
    ssm: SSMClient, stubber: Stubber, clock: FakeClock
) -> None:
    expect_send(stubber, timeout_seconds=91)
    expect_invocation(stubber, "Success", ResponseCode=0, StandardOutputContent="ok", StandardErrorContent="")

    assert runner(ssm, clock).run(request(deadline=90.5)).stdout == "ok"


def test_hyperpod_targets_are_refused_without_calling_ssm(
    ssm: SSMClient, stubber: Stubber, clock: FakeClock, ssm_calls: list[str]
) -> None:
    with pytest.raises(InvalidCommandRequest, match="session-manager"):
        runner(ssm, clock).run(request(target="sagemaker-cluster:abc_controller-machine-i-0123456789abcdef0"))
    assert ssm_calls == []


def test_poll_interval_must_be_positive(ssm: SSMClient) -> None:
    with pytest.raises(InvalidCommandRequest):
        RunCommandRunner(ssm, poll_seconds=0)
