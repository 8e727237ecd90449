"""The ``lab-agent`` command transport: the SSM agent's part on the lab's hosts."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any, Final

import boto3

from hyperpod_ha.commands import (
    CommandRequest,
    CommandResult,
    TargetUnreachable,
    register_transport,
)
from hyperpod_ha_dev.simulation.agent import (
    NON_INTERACTIVE_DOCUMENT,
    agent_command_line,
)
from hyperpod_ha_dev.simulation.lab.node_secret import NodeSecret
from hyperpod_lab import Lab, LabRunner

LAB_TRANSPORT: Final = "lab-agent"
# The lab's stack sets no Slurm triggers unless a scenario asks for them (SlurmTriggers on): the
# lab's runs deliver no watchdog tick that would install them, and their absence would be drift
# in every lab verdict.
LAB_PARAMETERS: Final = {"SlurmTriggers": "off"}


def lab_parameters(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """The stack's parameters in the lab: :data:`LAB_PARAMETERS` under the scenario's own."""
    return {**LAB_PARAMETERS, **parameters}


class LabAgent:
    """The ``lab-agent`` command transport: requests as the stack sends them to SSM (its own
    Session documents included), run on the lab's hosts by :class:`~hyperpod_lab.LabRunner`.

    Handlers cache their runner per container, so one agent serves every scenario; a
    scenario attaches its lab while it runs.
    """

    transport = LAB_TRANSPORT

    def __init__(self) -> None:
        self._runner: LabRunner | None = None
        self._secret: NodeSecret | None = None

    @contextlib.contextmanager
    def attached(self, lab: Lab, secret: NodeSecret) -> Iterator[None]:
        # The node's aws stand-in first on the PATH, as a controller has the AWS CLI.
        self._runner = LabRunner(lab, tools=secret.tools)
        self._secret = secret
        try:
            yield
        finally:
            self._runner = None
            self._secret = None

    def run(self, request: CommandRequest) -> CommandResult:
        runner, secret = self._runner, self._secret
        if runner is None or secret is None:
            raise TargetUnreachable("no lab is attached to the lab agent")
        line = agent_command_line(request, boto3.client("ssm"))
        secret_id = next(iter(request.parameters.get("secretId", [])), None)
        with secret.serving(secret_id):
            return runner.run(
                CommandRequest(
                    request.target, NON_INTERACTIVE_DOCUMENT, request.deadline_seconds, {"command": [line]}
                )
            )


_agent = LabAgent()
register_transport(LAB_TRANSPORT, lambda: _agent)


def attached_agent(lab: Lab, secret: NodeSecret) -> contextlib.AbstractContextManager[None]:
    """The ``lab-agent`` transport serving ``lab`` for the length of the block."""
    return _agent.attached(lab, secret)
