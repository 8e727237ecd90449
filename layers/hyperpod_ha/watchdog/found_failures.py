"""The watchdog's memory: one item in the state table saying it found the cluster not verified."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hyperpod_ha import state_table
from hyperpod_ha.watchdog.tick import Tick

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


class FoundFailures:
    """The watchdog's memory (one item in the state table): it found the cluster not verified."""

    def __init__(self, dynamodb: DynamoDBClient, table: str, ttl_seconds: int = 14 * 86400) -> None:
        self._ddb = dynamodb
        self._table = table
        self._ttl_seconds = ttl_seconds

    @staticmethod
    def _key(cluster: str) -> dict[str, Any]:
        return state_table.key(state_table.watchdog_key(cluster))

    def remember(self, cluster: str, tick: Tick, verdict: str, now: float) -> None:
        item = state_table.attribute_values(
            {
                "pk": state_table.watchdog_key(cluster),
                "tick_id": tick.id,
                "verdict": verdict,
                "expires_at": int(now) + self._ttl_seconds,
            }
        )
        self._ddb.put_item(TableName=self._table, Item=item)

    def pending(self, cluster: str) -> bool:
        found = self._ddb.get_item(TableName=self._table, Key=self._key(cluster), ConsistentRead=True)
        return "Item" in found

    def forget(self, cluster: str) -> None:
        self._ddb.delete_item(TableName=self._table, Key=self._key(cluster))
