"""Run one command through Run Command (EC2 instances and hybrid managed instances).

Run Command does not take ``sagemaker-cluster:`` targets (HyperPod nodes need Session
Manager), but it reaches controllers of ordinary Slurm clusters without a data channel:
``send_command``, then ``get_command_invocation`` until the invocation ends or the
deadline passes, when the command is cancelled.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from botocore.exceptions import BotoCoreError, ClientError

from hyperpod_ha.aws_errors import error_code
from hyperpod_ha.commands import (
    RUN_COMMAND,
    AccessDenied,
    CommandError,
    CommandRequest,
    CommandResult,
    CommandTimedOut,
    InvalidCommandRequest,
    TargetUnreachable,
)
from hyperpod_ha.commands.ssm_errors import command_error
from hyperpod_ha.observability import logger

if TYPE_CHECKING:
    from mypy_boto3_ssm import SSMClient
    from mypy_boto3_ssm.type_defs import GetCommandInvocationResultTypeDef

TRANSPORT: Final = RUN_COMMAND
POLL_SECONDS: Final = 1.0
# SendCommand's TimeoutSeconds (how long the command may wait for delivery) starts at 30.
MIN_DELIVERY_TIMEOUT_SECONDS: Final = 30
HYPERPOD_TARGET_PREFIX: Final = "sagemaker-cluster:"

_RUNNING = frozenset({"Pending", "InProgress", "Delayed"})


class RunCommandRunner:
    """Runs a Command document (``AWS-RunShellScript`` or a custom one) on one instance."""

    transport = TRANSPORT

    def __init__(
        self,
        ssm: SSMClient,
        *,
        poll_seconds: float = POLL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not poll_seconds > 0:
            raise InvalidCommandRequest(f"poll interval must be positive, got {poll_seconds!r}")
        self._ssm = ssm
        self._poll_seconds = poll_seconds
        self._clock = clock
        self._sleep = sleep

    def run(self, request: CommandRequest) -> CommandResult:
        if request.target.startswith(HYPERPOD_TARGET_PREFIX):
            raise InvalidCommandRequest(
                f"Run Command does not accept {HYPERPOD_TARGET_PREFIX} targets; "
                "use the session-manager transport"
            )
        started = self._clock()
        command_id = self._send(request)
        logger.info(
            "command sent",
            extra={"command_id": command_id, "target": request.target, "document": request.document},
        )
        invocation = self._wait(command_id, request, started + request.deadline_seconds)
        return self._result(invocation, request, self._clock() - started)

    def _send(self, request: CommandRequest) -> str:
        parameters = {name: list(values) for name, values in request.parameters.items()}
        # A command not delivered by then must never run late, after we reported a timeout.
        delivery_timeout = max(MIN_DELIVERY_TIMEOUT_SECONDS, math.ceil(request.deadline_seconds))
        try:
            response = self._ssm.send_command(
                InstanceIds=[request.target],
                DocumentName=request.document,
                Parameters=parameters,
                TimeoutSeconds=delivery_timeout,
            )
        except (ClientError, BotoCoreError) as error:
            raise command_error(error, "SendCommand", request.target) from error
        return response["Command"]["CommandId"]

    def _wait(
        self, command_id: str, request: CommandRequest, deadline: float
    ) -> GetCommandInvocationResultTypeDef:
        # Polled here rather than with botocore's ``command_executed`` waiter: the waiter counts
        # attempts of whole-second delays, while this loop stops at the deadline itself (the
        # acceptors are the same: Pending/InProgress/Delayed and InvocationDoesNotExist retry).
        while True:
            invocation = self._invocation(command_id, request.target)
            if invocation is not None and invocation["Status"] not in _RUNNING:
                return invocation
            remaining = deadline - self._clock()
            if remaining <= 0:
                self._cancel(command_id, request.target)
                raise CommandTimedOut(
                    f"command {command_id} on {request.target} did not finish within "
                    f"{request.deadline_seconds:g} s; cancelled"
                )
            self._sleep(min(self._poll_seconds, remaining))

    def _invocation(self, command_id: str, target: str) -> GetCommandInvocationResultTypeDef | None:
        try:
            return self._ssm.get_command_invocation(CommandId=command_id, InstanceId=target)
        except ClientError as error:
            if error_code(error) == "InvocationDoesNotExist":
                return None  # usual for a moment right after SendCommand
            raise command_error(error, "GetCommandInvocation", target) from error
        except BotoCoreError as error:
            raise command_error(error, "GetCommandInvocation", target) from error

    def _cancel(self, command_id: str, target: str) -> None:
        try:
            self._ssm.cancel_command(CommandId=command_id, InstanceIds=[target])
        except ClientError as error:
            logger.warning(
                "could not cancel command",
                extra={"command_id": command_id, "error_code": error_code(error)},
            )
        except BotoCoreError as error:
            logger.warning(
                "could not cancel command",
                extra={"command_id": command_id, "error_type": type(error).__name__},
            )

    def _result(
        self, invocation: GetCommandInvocationResultTypeDef, request: CommandRequest, duration: float
    ) -> CommandResult:
        status = invocation["Status"]
        details = invocation.get("StatusDetails", "")
        command_id = invocation.get("CommandId", "")
        where = f"command {command_id} on {request.target}"
        exit_code = invocation.get("ResponseCode", -1)
        # A command that ran and exited non-zero is a result, not an error: the probe's exit
        # code is evidence the caller weighs.
        ran = status == "Success" or (status == "Failed" and details == "Failed" and exit_code >= 0)
        if ran:
            logger.info("command finished", extra={"command_id": command_id, "exit_code": exit_code})
            return CommandResult(
                stdout=invocation.get("StandardOutputContent", ""),
                stderr=invocation.get("StandardErrorContent", ""),
                exit_code=exit_code,
                duration_seconds=duration,
                transport=TRANSPORT,
            )
        reason = f"{where} ended {status}/{details}"
        if details in ("DeliveryTimedOut", "Undeliverable"):
            raise TargetUnreachable(f"{reason}: the agent did not take the command")
        if details == "AccessDenied":
            raise AccessDenied(f"{reason}: the agent refused the command")
        if details == "ExecutionTimedOut" or status == "TimedOut":
            raise CommandTimedOut(f"{reason}: the document's execution timeout passed")
        if status in ("Cancelled", "Cancelling"):
            raise CommandError(f"{reason}: cancelled outside this runner")
        raise CommandError(reason)
