"""Step Functions' own integration (``arn:aws:states:::states:startExecution``) as AWS runs it,
where moto 5.1 differs: the ASL names the call's fields as the service documents them
(``StateMachineArn``, ``Input``, ``Name``), and moto hands them to boto3 unchanged, whose
``start_execution`` takes ``stateMachineArn``, ``input``, ``name``: the task failed with a
KeyError. A call without ``Name`` gets a UUID from AWS; moto named every such execution
``None``, so a second one failed with ExecutionAlreadyExists. AWS answers ``ExecutionArn`` and
``StartDate``; moto passed on boto3's ``executionArn`` and ``startDate``, so a ResultSelector
of ``$.ExecutionArn`` failed the task. Patched while the embedded AWS exists (``embedded_aws``):
the fields are renamed first (a UUID name where none is given), the input made text as moto
already does, and the answer's fields named as AWS names them."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from typing import Any
from unittest import mock

_FIELDS = {"StateMachineArn": "stateMachineArn", "Input": "input", "Name": "name"}
_ANSWER = {"executionArn": "ExecutionArn", "startDate": "StartDate"}


@contextlib.contextmanager
def patched() -> Iterator[None]:
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import (
        state_task_service_sfn as sfn_task,
    )

    moto_normalise = sfn_task.StateTaskServiceSfn._normalise_parameters

    def normalise(self: Any, parameters: dict[str, Any], *args: Any, **kwargs: Any) -> None:
        moto_normalise(self, parameters, *args, **kwargs)
        if self._get_boto_service_action() == "start_execution":
            for documented, member in _FIELDS.items():
                if documented in parameters:
                    parameters[member] = parameters.pop(documented)
            parameters.setdefault("name", str(uuid.uuid4()))

    def answer(self: Any, response: Any, *args: Any, **kwargs: Any) -> None:
        if self._get_boto_service_action() == "start_execution" and isinstance(response, dict):
            for member, documented in _ANSWER.items():
                if member in response:
                    response[documented] = response.pop(member)

    with (
        mock.patch.object(sfn_task.StateTaskServiceSfn, "_normalise_parameters", normalise),
        mock.patch.object(sfn_task.StateTaskServiceSfn, "_normalise_response", answer),
    ):
        yield
