"""The "still open" reminder: at most once per ``ReminderMinutes`` per incident, never per run.

Every run that finds a problem open again (each watchdog tick on a cluster that stays down)
reaches the OpsItem; only the first after the interval tells people. The interval counts from
the OpsItem's creation (its "opened" message), then from the last reminder, kept per OpsItem in
the state table and claimed with a conditional write, so of two runs at once one reminds.
``ReminderMinutes`` 0, or no state table, means no reminder at all."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from hyperpod_ha import state_table

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# The record outlives its interval by a day: an expired one only lets a due reminder through.
_KEPT_SECONDS: Final = 86_400


@dataclass(frozen=True)
class Reminders:
    dynamodb: DynamoDBClient | None
    table: str | None
    every_seconds: int  # 0: never

    @property
    def enabled(self) -> bool:
        return bool(self.every_seconds and self.dynamodb is not None and self.table)

    def claim(self, cluster: str, ops_item_id: str, opened_at: float | None, now: float) -> bool:
        """True when this run is to send the reminder of ``ops_item_id`` (and it is recorded)."""
        if not self.enabled or (opened_at is not None and now - opened_at < self.every_seconds):
            return False
        return state_table.claim_reminder(
            self._dynamodb,
            self._table,
            state_table.reminder_key(cluster, ops_item_id),
            int(now),
            cutoff=int(now) - self.every_seconds,
            expires_at=int(now) + self.every_seconds + _KEPT_SECONDS,
        )

    def release(self, cluster: str, ops_item_id: str, now: float) -> None:
        """The claimed reminder could not be sent: a retried call may claim it again."""
        if self.enabled:
            key = state_table.reminder_key(cluster, ops_item_id)
            state_table.release_reminder(self._dynamodb, self._table, key, int(now))

    @property
    def _dynamodb(self) -> DynamoDBClient:
        assert self.dynamodb is not None, "used only when enabled"
        return self.dynamodb

    @property
    def _table(self) -> str:
        assert self.table, "used only when enabled"
        return self.table
