"""Step Functions' own integration (``arn:aws:states:::states:startExecution``) as AWS runs it,
where moto 5.1 differs: the ASL names the call's fields as the service documents them
(``StateMachineArn``, ``Input``, ``Name``), and moto hands them to boto3 unchanged, whose
``start_execution`` takes ``stateMachineArn``, ``input``, ``name``: the task failed with a
KeyError. Patched while the embedded AWS exists (``embedded_aws``): the fields are renamed
first, the input made text as moto already does."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any
from unittest import mock

_FIELDS = {"StateMachineArn": "stateMachineArn", "Input": "input", "Name": "name"}


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

    with mock.patch.object(sfn_task.StateTaskServiceSfn, "_normalise_parameters", normalise):
        yield
