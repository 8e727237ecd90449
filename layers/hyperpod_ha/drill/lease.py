"""The cluster's lease as a drill holds it (DynamoDB, the state table)."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hyperpod_ha.state_table import lease_key, put_lease, release_lease

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

    def take(self, cluster: str, lease_id: str, execution_arn: str) -> Mapping[str, Any] | None:
        """``None`` when taken (now or by this drill before); otherwise the holder's item."""
        now = int(self.clock())
        # This drill's own lease may be taken again (a retried step).
        item = {
            "pk": {"S": lease_key(cluster)},
            "lease_id": {"S": lease_id},
            "trigger": {"S": f"drill:{lease_id}"},
            "kind": {"S": "drill"},
            "execution_name": {"S": execution_arn.rsplit(":", 1)[-1]},
            "execution_arn": {"S": execution_arn},
            "taken_at": {"N": str(now)},
            "expires_at": {"N": str(now + self.lease_seconds)},
            "joined_count": {"N": "0"},
        }
        return put_lease(self.dynamodb, self.table, item, now, lease_id)

    def joined(self, cluster: str, lease_id: str) -> int:
        item = self.dynamodb.get_item(
            TableName=self.table, Key={"pk": {"S": lease_key(cluster)}}, ConsistentRead=True
        ).get("Item")
        if not item or item.get("lease_id", {}).get("S") != lease_id:
            return 0
        return int(item.get("joined_count", {}).get("N", "0"))

    def release(self, cluster: str, lease_id: str) -> bool:
        return release_lease(self.dynamodb, self.table, cluster, lease_id)


def lease_id_for_drill(execution_arn: str) -> str:
    return hashlib.sha256(f"drill\n{execution_arn}".encode()).hexdigest()[:20]
