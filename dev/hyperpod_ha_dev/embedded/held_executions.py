"""Executions of the embedded stack's state machines that Step Functions reports ``RUNNING`` and
that run no state: what a step invoked on its own sees from inside its own execution.

moto runs each execution in a thread from its first state on. A test of one step, invoked
directly, needs the execution it names to exist and to stay running meanwhile: the steps that act
on their request's content ask ``DescribeExecution`` first (``hyperpod_ha.own_executions``).
:func:`held_execution` starts one whose worker never starts; :func:`end_execution` ends it as
Step Functions would report it ended.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any
from unittest import mock

import boto3

# The executions started here, by ARN: the only ones :func:`end_execution` ends.
_held: dict[str, Any] = {}


def held_execution(state_machine_arn: str, name: str, execution_input: object | None = None) -> str:
    """Start an execution ``name`` of ``state_machine_arn`` that stays ``RUNNING``, running no
    state; its ARN."""
    from moto.stepfunctions.parser.api import ExecutionStatus
    from moto.stepfunctions.parser.backend.execution import Execution

    def hold(execution: Execution) -> None:
        execution.exec_status = ExecutionStatus.RUNNING
        _held[execution.exec_arn] = execution

    with mock.patch.object(Execution, "start", hold):
        started = boto3.client("stepfunctions").start_execution(
            stateMachineArn=state_machine_arn, name=name, input=json.dumps(execution_input or {})
        )
    return str(started["executionArn"])


def end_execution(execution_arn: str, status: str = "SUCCEEDED") -> None:
    """End a held execution with ``status`` (``SUCCEEDED``, ``FAILED``, ``ABORTED``, ``TIMED_OUT``)."""
    from moto.stepfunctions.parser.api import ExecutionStatus

    execution = _held.pop(execution_arn)
    execution.exec_status = ExecutionStatus(status)
    execution.stop_date = dt.datetime.now(dt.UTC)
