"""What the restore reads and counts in the state table (DynamoDB) besides the lease: the
actions counted per cluster and hour (``RestoreMaxPerHour``), the watchdog's record of
since when each controller has been unreachable (``reboot-node``) and the operator's silence."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hyperpod_ha import state_table
from hyperpod_ha.restore.settings import HOUR
from hyperpod_ha.silences import Silences

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


@dataclass(frozen=True)
class RestoreItems:
    dynamodb: DynamoDBClient
    table: str
    cluster: str
    clock: Callable[[], float] = time.time

    def actions_this_hour(self, hour: int) -> int:
        return state_table.restore_actions(self.dynamodb, self.table, self.cluster, hour)

    def count_action(self, hour: int, at_most: int) -> int | None:
        """One more action in ``hour``: the count, or ``None`` at the bound (the item lives on
        one hour past it)."""
        expires_at = (hour + 2) * HOUR
        return state_table.count_restore_action(
            self.dynamodb, self.table, self.cluster, hour, at_most, expires_at=expires_at
        )

    def unreachable_since(self) -> dict[str, int]:
        """Since when each controller has been unreachable (the watchdog's record, unless stale)."""
        return state_table.unreachable_since(self.dynamodb, self.table, self.cluster, self.clock())

    def restart_unreachable(self, instance_id: str, now: int) -> None:
        """``instance_id`` was rebooted at ``now``: its wait starts again."""
        state_table.restart_unreachable(self.dynamodb, self.table, self.cluster, instance_id, now)

    def silenced(self) -> str | None:
        """The silence in force now, in words (read when asked: each step that acts asks)."""
        silence = Silences(self.dynamodb, self.table, self.clock).in_force(self.cluster)
        return None if silence is None else silence.describe()
