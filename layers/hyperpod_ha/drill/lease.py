"""The cluster's lease as a drill holds it (DynamoDB, the state table)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hyperpod_ha.lease import Lease
from hyperpod_ha.state_table import put_lease, read_lease, release_lease

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


@dataclass(frozen=True)
class DrillLease:
    """The cluster's verification lease, held by a drill for its whole run.

    Same item as :class:`~hyperpod_ha.runs.verification_runs.VerificationRuns` writes, so a trigger
    during the drill joins it; ``execution_arn`` names the drill's execution for them.
    """

    dynamodb: DynamoDBClient
    table: str
    lease_seconds: int
    clock: Callable[[], float] = time.time

    def take(self, cluster: str, lease_id: str, execution_arn: str) -> Lease | None:
        """``None`` when taken (now or by this drill before); otherwise the holder's lease."""
        lease = Lease.for_execution("drill", lease_id, execution_arn, int(self.clock()), self.lease_seconds)
        # This drill's own lease may be taken again (a retried step).
        return put_lease(self.dynamodb, self.table, cluster, lease, retake=True)

    def holder(self, cluster: str) -> Lease | None:
        """The cluster's lease as stored (whoever holds it), or ``None``."""
        return read_lease(self.dynamodb, self.table, cluster)

    def joined(self, cluster: str, lease_id: str) -> int:
        """How many triggers joined the drill while it held the lease."""
        lease = read_lease(self.dynamodb, self.table, cluster)
        return lease.joined_count if lease is not None and lease.lease_id == lease_id else 0

    def release(self, cluster: str, lease_id: str) -> bool:
        return release_lease(self.dynamodb, self.table, cluster, lease_id)
