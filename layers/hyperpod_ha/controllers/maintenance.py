"""Whether the cluster is being updated: HyperPod's maintenance as DescribeCluster and the
controllers' node statuses show it.

During a platform update (``UpdateClusterSoftware``; for Slurm every controller is patched at
once) the cluster is ``SystemUpdating`` (``Updating`` for an operator's UpdateCluster), its
nodes ``SystemUpdating`` or ``DeepHealthCheckInProgress`` (botocore 1.44 adds
``AttachInProgress`` and ``DetachInProgress``), and HyperPod's backup script stops slurmctld: a
failover and a burst of ON/OFF messages that are not a failure. A verification run that sees
maintenance defers its incident until the update has ended (:mod:`hyperpod_ha.verdict.maintenance`).

A status is SageMaker's word; one this module does not know is kept (cut to
:data:`STATUS_LIMIT` characters, never an error: SageMaker adds statuses) and is not
maintenance. Only what is not text at all is refused, with :class:`MaintenanceInputError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from hyperpod_ha.controllers.errors import MaintenanceInputError

UPDATING_CLUSTER_STATUSES: Final = frozenset({"SystemUpdating", "Updating"})
UPDATING_NODE_STATUSES: Final = frozenset(
    {"SystemUpdating", "DeepHealthCheckInProgress", "AttachInProgress", "DetachInProgress"}
)
# SageMaker's statuses are single words of under 30 letters; a longer text is cut, not trusted.
STATUS_LIMIT: Final = 64
MAX_NODES: Final = 32  # as many controllers as a verdict weighs (verdict.models.MAX_REPORTS)


class StatusKind(StrEnum):
    UPDATING = "updating"  # one of the statuses above: maintenance
    OTHER = "other"  # any other status, known or not: not maintenance


def status_text(value: object, what: str) -> str:
    """A status as SageMaker gave it: text, cut to :data:`STATUS_LIMIT`; ``None`` is ``""``."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise MaintenanceInputError(f"{what} is not a string")
    return value.strip()[:STATUS_LIMIT]


def cluster_status_kind(status: str) -> StatusKind:
    return StatusKind.UPDATING if status in UPDATING_CLUSTER_STATUSES else StatusKind.OTHER


def node_status_kind(status: str) -> StatusKind:
    return StatusKind.UPDATING if status in UPDATING_NODE_STATUSES else StatusKind.OTHER


@dataclass(frozen=True)
class NodeUnderUpdate:
    instance_id: str
    status: str


@dataclass(frozen=True)
class Maintenance:
    """The cluster's status and its controllers that are being updated."""

    cluster_status: str
    controllers: tuple[NodeUnderUpdate, ...] = ()

    @property
    def in_progress(self) -> bool:
        return cluster_status_kind(self.cluster_status) is StatusKind.UPDATING or bool(self.controllers)

    def describe(self) -> str:
        """``maintenance in progress: cluster SystemUpdating; controller i-1 DeepHealthCheckInProgress``."""
        if not self.in_progress:
            return f"no maintenance (cluster {self.cluster_status or 'status unknown'})"
        parts = [f"cluster {self.cluster_status or 'status unknown'}"]
        parts += [f"controller {node.instance_id} {node.status}" for node in self.controllers]
        return "maintenance in progress: " + "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "in_progress": self.in_progress,
            "cluster_status": self.cluster_status,
            "controllers": [{"instance_id": n.instance_id, "status": n.status} for n in self.controllers],
        }

    @classmethod
    def from_json(cls, data: object) -> Maintenance:
        """Discovery's ``maintenance`` read back from the workflow's JSON; ``in_progress`` is
        derived again from the statuses, never taken from the input."""
        if not isinstance(data, Mapping):
            raise MaintenanceInputError("maintenance is not a JSON object")
        nodes = data.get("controllers", [])
        if not isinstance(nodes, list):
            raise MaintenanceInputError("maintenance.controllers is not a list")
        statuses = []
        for node in nodes[:MAX_NODES]:
            if not isinstance(node, Mapping):
                raise MaintenanceInputError("a controller under maintenance is not a JSON object")
            instance_id = status_text(node.get("instance_id"), "a controller's instance_id")
            statuses.append(
                (instance_id or "unknown", status_text(node.get("status"), "a controller's status"))
            )
        return of(status_text(data.get("cluster_status"), "maintenance.cluster_status"), statuses)


def of(cluster_status: str, controller_statuses: Iterable[tuple[str, str]]) -> Maintenance:
    """The maintenance seen from the cluster's status and each controller's (instance id,
    status): only controllers whose status is an update's are kept."""
    updating = tuple(
        NodeUnderUpdate(instance_id, status)
        for instance_id, status in controller_statuses
        if node_status_kind(status) is StatusKind.UPDATING
    )
    return Maintenance(cluster_status, updating[:MAX_NODES])
