"""The cluster's lease as a drill's or a restore's execution holds it (DynamoDB, the state table),
and the re-check every step that acts on a controller makes before it acts.

The same item as the verification runs' (``VerificationRuns``): a trigger during the drill or
the restore joins it; ``execution_arn`` names the execution for them. Its id follows from the
execution's ARN (``hyperpod_ha.lease``), so every step and retry of one execution holds the
same lease and the abandoned-run clean-up finds it from the ARN alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

from hyperpod_ha.controllers.models import ClusterControllers, Controller
from hyperpod_ha.controllers.targets import discovered_controller
from hyperpod_ha.errors import InputRejected
from hyperpod_ha.lease import ExecutionKind, Lease, lease_id_for_drill, lease_id_for_restore
from hyperpod_ha.state_table import put_lease, read_lease, release_lease

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


@dataclass(frozen=True)
class HandedLease:
    """The run that hands the cluster's lease over (the verification run that found the
    restore to do, before its snapshot): its lease's id and its execution's name."""

    lease_id: str
    run: str


_LEASE_IDS: Final[dict[str, Callable[[str], str]]] = {
    "drill": lease_id_for_drill,
    "restore": lease_id_for_restore,
}


@dataclass(frozen=True)
class ExecutionLease:
    """The cluster's lease, held by one drill or restore execution for its whole run."""

    dynamodb: DynamoDBClient
    table: str
    lease_seconds: int
    kind: ExecutionKind
    clock: Callable[[], float] = time.time

    def lease_id(self, execution_arn: str) -> str:
        return _LEASE_IDS[self.kind](execution_arn)

    def take(self, cluster: str, execution_arn: str, handed: HandedLease | None = None) -> Lease | None:
        """``None`` when taken (now, or by this execution before: a retried step; or handed over
        by the run ``handed`` names, while that run holds it); otherwise the holder's lease."""
        lease = Lease.for_execution(
            self.kind, self.lease_id(execution_arn), execution_arn, int(self.clock()), self.lease_seconds
        )
        if handed is not None:
            lease = replace(lease, handed_from=handed.run)
        by = handed.lease_id if handed is not None else None
        return put_lease(self.dynamodb, self.table, cluster, lease, retake=True, handed_by=by)

    def begin(
        self, cluster: str, execution_arn: str, refused: str = "", handed: HandedLease | None = None
    ) -> dict[str, Any]:
        """The begin step: the lease taken, or not and who holds it (``refused`` starts the reason)."""
        lease_id = self.lease_id(execution_arn)
        holder = self.take(cluster, execution_arn, handed)
        if holder is None:
            taken: dict[str, Any] = {"taken": True, "lease_id": lease_id, "reason": None}
            return {**taken, "handed_from": handed.run} if handed is not None else taken
        running = holder.execution_arn or holder.execution_name or "unknown"
        reason = f"{refused}a {holder.kind} holds the cluster now: {running}"
        return {"taken": False, "lease_id": lease_id, "reason": reason, "holder": running}

    def holder(self, cluster: str) -> Lease | None:
        """The cluster's lease as stored (whoever holds it), or ``None``."""
        return read_lease(self.dynamodb, self.table, cluster)

    def joined(self, cluster: str, lease_id: str) -> int:
        """How many triggers joined this lease while it was held."""
        lease = self.holder(cluster)
        return lease.joined_count if lease is not None and lease.lease_id == lease_id else 0

    def release(self, cluster: str, lease_id: str) -> bool:
        return release_lease(self.dynamodb, self.table, cluster, lease_id)

    def own_controller(
        self,
        cluster: str,
        execution_arn: str,
        controllers: ClusterControllers,
        node: tuple[str, str | None],
        refused: type[InputRejected],
        what: str,
    ) -> Controller:
        """The re-check before acting on ``node`` (its instance id and target): this execution
        holds the cluster's lease as stored now, and the node is a controller of
        ``controllers`` (this cluster's discovery, made now), at the target discovery made.
        ``refused`` (the feature's error) names why not, starting with ``what``; nothing ran."""
        held = self.holder(cluster)
        if held is None or held.kind != self.kind or held.lease_id != self.lease_id(execution_arn):
            raise refused(f"{what}this {self.kind} does not hold the cluster's lease: no command is run")
        instance_id, target = node
        return discovered_controller(controllers, instance_id, target, rejected=refused)
