"""The commands a drill runs on the controllers: its three Session documents, through the stack's
command transport (the kit's ``NodeDocuments``)."""

from __future__ import annotations

from dataclasses import dataclass

from hyperpod_ha.acting.node_commands import NodeDocuments
from hyperpod_ha.drill.node import NodeOutput, jobs_parameters, takeover_parameters
from hyperpod_ha.errors import HyperpodHaError


class DrillCommandFailed(HyperpodHaError):
    """A drill command could not run, or Slurm refused it; the drill fails with this reason."""


@dataclass(frozen=True)
class NodeCommands:
    """The drill's three Session documents."""

    documents: NodeDocuments
    takeover_document: str
    jobs_document: str
    accounting_document: str

    def takeover(self, target: str, index: int) -> NodeOutput:
        return self._run(target, self.takeover_document, takeover_parameters(index))

    def jobs(self, target: str, job_ids: list[str]) -> NodeOutput:
        return self._run(target, self.jobs_document, jobs_parameters("list", job_ids))

    def submit(self, target: str) -> NodeOutput:
        return self._run(target, self.jobs_document, jobs_parameters("submit"))

    def register(self, target: str) -> NodeOutput:
        return self._run(target, self.accounting_document, {})

    def _run(self, target: str, document: str, parameters: dict[str, list[str]]) -> NodeOutput:
        return NodeOutput.of(self.documents.run(target, document, parameters))
