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

from botocore.exceptions import ClientError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

Tally = Literal["counted", "already-counted", "threshold-crossed"]


@dataclass(frozen=True)
class MassFailurePolicy:
    threshold: int  # more than this many unhealthy workers ...
    window_seconds: int  # ... within one window of this length


@dataclass(frozen=True)
class WorkerTally:
    outcome: Tally
    window_start: int
    unhealthy: int


class WorkerFailures:
    def __init__(
        self,
        dynamodb: DynamoDBClient,
        table: str,
        policy: MassFailurePolicy,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._ddb = dynamodb
        self._table = table
        self._policy = policy
        self._clock = clock

    def record_unhealthy(self, cluster: str, instance_id: str) -> WorkerTally:
        now = int(self._clock())
        window = self._policy.window_seconds
        start = now - now % window
        try:
            answer = self._ddb.update_item(
                TableName=self._table,
                Key={"pk": {"S": f"workers#{cluster}#{start}"}},
                UpdateExpression="ADD instances :instance, unhealthy :one SET expires_at = :expires",
                ConditionExpression="attribute_not_exists(instances) OR NOT contains(instances, :id)",
                ExpressionAttributeValues={
                    ":instance": {"SS": [instance_id]},
                    ":id": {"S": instance_id},
                    ":one": {"N": "1"},
                    ":expires": {"N": str(start + 2 * window)},
                },
                ReturnValues="UPDATED_NEW",
            )
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            return WorkerTally("already-counted", start, -1)
        unhealthy = int(answer["Attributes"]["unhealthy"]["N"])
        crossed = unhealthy == self._policy.threshold + 1
        return WorkerTally("threshold-crossed" if crossed else "counted", start, unhealthy)

    def forget(self, cluster: str, window_start: int, instance_id: str) -> None:
        """Undo one count, so a retried delivery counts (and notifies) again."""
        self._ddb.update_item(
            TableName=self._table,
            Key={"pk": {"S": f"workers#{cluster}#{window_start}"}},
            UpdateExpression="DELETE instances :instance ADD unhealthy :minus",
            ExpressionAttributeValues={":instance": {"SS": [instance_id]}, ":minus": {"N": "-1"}},
        )
