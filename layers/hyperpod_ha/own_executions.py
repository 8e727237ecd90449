"""Whether a step's request comes from a running execution of this stack's own state machine
(issue 35, finding 2).

Step Functions hands each step ``$$.Execution.Id``; a direct invoke of the function can write any
text there. A step that acts on what its request says without holding the cluster's lease (it
takes the lease, writes a status record `hyperpod-ha status` prints, publishes a notice, creates
an OpsItem, opens or notes an incident) asks Step Functions first: ``DescribeExecution`` of that
id must answer an execution of the state machine the function was deployed with, still
``RUNNING`` (a step runs only inside a running execution). Anything else is the feature's typed
reject, and the step acts on nothing. The grant is ``states:DescribeExecution`` on that state
machine's executions only (docs/security.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

from hyperpod_ha.errors import InputRejected

if TYPE_CHECKING:
    from mypy_boto3_stepfunctions import SFNClient

RUNNING: Final = "RUNNING"
# An execution's name: 1-80 characters, none of them the ARN's separator or a blank.
_NAME: Final = re.compile(r"[^:\s]{1,80}")
# DescribeExecution's answers for an id that names no execution: not an answer to retry.
_NO_SUCH_EXECUTION: Final = frozenset({"ExecutionDoesNotExist", "InvalidArn"})
_STATUS_CHARS: Final = 20


class ExecutionStatuses(Protocol):
    def status(self, execution_arn: str) -> tuple[str, str] | None:
        """The execution's state machine ARN and status, or ``None`` when there is no such one."""
        ...


@dataclass(frozen=True)
class DescribedExecution:
    """What Step Functions says of an execution: its state machine, status and input."""

    state_machine_arn: str
    status: str
    input: str


@dataclass(frozen=True)
class StepFunctionsExecutions:
    """``DescribeExecution``, made on first use (only the steps that check call it)."""

    client: Callable[[], SFNClient]

    def described(self, execution_arn: str) -> DescribedExecution | None:
        """The execution as Step Functions describes it; ``None`` when there is no such one."""
        from botocore.exceptions import ClientError

        try:
            described = self.client().describe_execution(executionArn=execution_arn)
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") in _NO_SUCH_EXECUTION:
                return None
            raise  # throttled or denied: the state machine's retry, or its Catch, decides
        return DescribedExecution(
            str(described.get("stateMachineArn") or ""),
            str(described.get("status") or ""),
            str(described.get("input") or ""),
        )

    def status(self, execution_arn: str) -> tuple[str, str] | None:
        found = self.described(execution_arn)
        return None if found is None else (found.state_machine_arn, found.status)


def execution_prefix(state_machine_arn: str) -> str:
    """What the ARN of every execution of ``state_machine_arn`` starts with."""
    return state_machine_arn.replace(":stateMachine:", ":execution:", 1) + ":"


@dataclass(frozen=True)
class OwnExecutions:
    """The executions of one of this stack's state machines (``workflow``: its name in a reason)."""

    state_machine_arn: str
    executions: ExecutionStatuses
    workflow: str

    def is_execution_of(self, execution_arn: str) -> bool:
        """Whether the ARN is one of an execution of this state machine (its text only)."""
        prefix = execution_prefix(self.state_machine_arn)
        return (
            ":stateMachine:" in self.state_machine_arn
            and execution_arn.startswith(prefix)
            and _NAME.fullmatch(execution_arn[len(prefix) :]) is not None
        )

    def check(self, execution_arn: str, refused: type[InputRejected], what: str = "") -> None:
        """Nothing when ``execution_arn`` is a running execution of this state machine;
        ``refused`` otherwise, its reason starting with ``what`` (what was not done, the caller's
        words; the request's text is never in it: the reason is logged)."""
        if not self.is_execution_of(execution_arn):
            raise refused(
                f"{what}the request names no execution of this stack's {self.workflow} state machine"
            )
        found = self.executions.status(execution_arn)
        if found is None:
            raise refused(f"{what}no {self.workflow} execution of that name exists")
        machine, status = found
        if machine != self.state_machine_arn:
            raise refused(f"{what}that execution is not of this stack's {self.workflow} state machine")
        if status != RUNNING:
            shown = status[:_STATUS_CHARS] or "of no status"
            raise refused(f"{what}that {self.workflow} execution is {shown}, not running")
