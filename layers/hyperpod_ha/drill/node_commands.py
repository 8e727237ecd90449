"""The commands a drill runs on the controllers: its three Session documents, through the stack's
command transport."""

from __future__ import annotations

from dataclasses import dataclass

from hyperpod_ha.commands import CommandError, CommandRequest, CommandRunner
from hyperpod_ha.drill.node import (
    NodeOutput,
    jobs_parameters,
    parse_node_output,
    takeover_parameters,
)
from hyperpod_ha.errors import HyperpodHaError


class DrillCommandFailed(HyperpodHaError):
    """A drill command could not run, or Slurm refused it; the drill fails with this reason."""


@dataclass(frozen=True)
class NodeCommands:
    """The drill's three Session documents, run through the stack's command transport."""

    runner: CommandRunner
    takeover_document: str
    jobs_document: str
    accounting_document: str
    deadline_seconds: float

    def takeover(self, target: str, index: int) -> NodeOutput:
        return self._run(target, self.takeover_document, takeover_parameters(index))

    def jobs(self, target: str, job_ids: list[str]) -> NodeOutput:
        return self._run(target, self.jobs_document, jobs_parameters("list", job_ids))

    def submit(self, target: str) -> NodeOutput:
        return self._run(target, self.jobs_document, jobs_parameters("submit"))

    def register(self, target: str) -> NodeOutput:
        return self._run(target, self.accounting_document, {})

    def _run(self, target: str, document: str, parameters: dict[str, list[str]]) -> NodeOutput:
        request = CommandRequest(target, document, self.deadline_seconds, parameters)
        try:
            result = self.runner.run(request)
        except CommandError as error:
            raise DrillCommandFailed(f"{type(error).__name__}: {error.reason}") from error
        try:
            output = parse_node_output(result.stdout)
        except ValueError as error:
            raise DrillCommandFailed(f"{error}; exit code {result.exit_code}") from error
        return output
