"""Unhealthy worker nodes, counted per time window, so a mass failure gives one notification.

A storm of node events is the norm when a rack or a switch fails. Each event costs one
conditional write: the instance is added to the window's set only if it is not there yet,
so redelivered events and repeated events of one node do not count twice, and exactly one
event sees the count pass the threshold.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from hyperpod_ha import state_table
from hyperpod_ha.ingestion.settings import MassFailurePolicy

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

Tally = Literal["counted", "already-counted", "threshold-crossed"]


@dataclass(frozen=True)
class WorkerTally:
    outcome: Tally
    window_start: int
    unhealthy: int


@dataclass(frozen=True)
class WorkerFailures:
    dynamodb: DynamoDBClient
    table: str
    policy: MassFailurePolicy
    clock: Callable[[], float] = time.time

    def record_unhealthy(self, cluster: str, instance_id: str) -> WorkerTally:
        now = int(self.clock())
        window = self.policy.window_seconds
        start = now - now % window
        unhealthy = state_table.count_worker(
            self.dynamodb, self.table, cluster, start, instance_id, expires_at=start + 2 * window
        )
        if unhealthy is None:
            return WorkerTally("already-counted", start, -1)
        crossed = unhealthy == self.policy.threshold + 1
        return WorkerTally("threshold-crossed" if crossed else "counted", start, unhealthy)

    def forget(self, cluster: str, window_start: int, instance_id: str) -> None:
        """Undo one count, so a retried delivery counts (and notifies) again."""
        state_table.uncount_worker(self.dynamodb, self.table, cluster, window_start, instance_id)
