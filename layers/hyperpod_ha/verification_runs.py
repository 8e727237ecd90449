"""One failover verification per cluster at a time.

A run holds the cluster's lease: an item in the state table written with a condition, with
a TTL so a lost run cannot block the cluster forever. The execution name is derived from
the cluster and the lease, and the lease id from the trigger's stable id, so a redelivered
trigger or a retried invocation can never start a second execution.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from botocore.exceptions import ClientError

from hyperpod_ha.settings import int_setting

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_stepfunctions import SFNClient

Outcome = Literal["started", "joined", "duplicate"]

# Joined trigger ids are kept on the lease for the run's evidence; a storm is only counted.
MAX_RECORDED_JOINS = 100


@dataclass(frozen=True)
class Trigger:
    """What asked for a verification: an SNS message, an EventBridge event, the watchdog or an
    operator. ``time`` is the trigger's own time (ISO 8601 UTC, or "" for the run's start): the
    run checks until SlurmctldTimeout plus a margin has passed since then."""

    source: Literal["sns", "eventbridge", "watchdog", "operator"]
    id: str
    summary: Mapping[str, Any] = field(default_factory=dict)
    time: str = ""

    @property
    def key(self) -> str:
        return f"{self.source}:{self.id}"


@dataclass(frozen=True)
class RunSettings:
    """Defaults handed to each run; the execution input can override them (runbook)."""

    settle_seconds: int
    max_attempts: int
    backoff_seconds: int
    lease_seconds: int
    dry_run: bool = False

    @classmethod
    def from_environment(cls) -> RunSettings:
        return cls(
            settle_seconds=int_setting("SETTLE_SECONDS", 0),
            max_attempts=int_setting("MAX_ATTEMPTS", 30),
            backoff_seconds=int_setting("BACKOFF_SECONDS", 5),
            lease_seconds=int_setting("LEASE_SECONDS", 3600),
        )


@dataclass(frozen=True)
class RunDecision:
    outcome: Outcome
    execution_arn: str
    lease_id: str


def lease_key(cluster: str) -> str:
    return f"lease#{cluster}"


def lease_id_for(trigger: Trigger) -> str:
    if trigger.source == "operator" and not trigger.id:
        return uuid.uuid4().hex[:20]
    return hashlib.sha256(trigger.key.encode()).hexdigest()[:20]


def execution_name(cluster: str, lease_id: str) -> str:
    # Execution names: 1-80 characters of [A-Za-z0-9-_].
    safe = re.sub(r"[^A-Za-z0-9_-]", "-", cluster)[:58]
    return f"{safe}-{lease_id}"


def execution_arn(state_machine_arn: str, name: str) -> str:
    return state_machine_arn.replace(":stateMachine:", ":execution:", 1) + f":{name}"


class VerificationRuns:
    """Starts or joins the cluster's verification run."""

    def __init__(
        self,
        dynamodb: DynamoDBClient,
        stepfunctions: SFNClient,
        table: str,
        state_machine_arn: str,
        settings: RunSettings,
        clock: Any = time.time,
    ) -> None:
        self._ddb = dynamodb
        self._sfn = stepfunctions
        self._table = table
        self._state_machine_arn = state_machine_arn
        self._settings = settings
        self._clock = clock

    def start_or_join(self, cluster: str, trigger: Trigger, reason: str) -> RunDecision:
        lease_id = lease_id_for(trigger)
        name = execution_name(cluster, lease_id)
        # Two passes at most: the lease may be released between our failed take and our join.
        for _ in range(2):
            # Read first: in a storm the lease is held, and a failed conditional put is a write too.
            holder = self._live_lease(cluster) or self._take_lease(cluster, lease_id, trigger, name)
            if holder is None:
                return self._start(cluster, trigger, reason, lease_id, name)
            if holder.get("lease_id", {}).get("S") == lease_id:
                # This very trigger took the lease before (a redelivery or a retry after a crash):
                # make sure its execution exists; StartExecution is idempotent for the same name and input.
                return self._start(cluster, trigger, reason, lease_id, name, duplicate=True)
            joined = self._join(cluster, holder, trigger)
            if joined is not None:
                return joined
        raise RuntimeError(f"the lease of cluster {cluster} kept changing while joining")

    def release(self, cluster: str, lease_id: str) -> bool:
        return release_lease(self._ddb, self._table, cluster, lease_id)

    def _live_lease(self, cluster: str) -> Mapping[str, Any] | None:
        item: Mapping[str, Any] | None = self._ddb.get_item(
            TableName=self._table, Key={"pk": {"S": lease_key(cluster)}}, ConsistentRead=True
        ).get("Item")
        if item is None or int(item.get("expires_at", {}).get("N", "0")) < int(self._clock()):
            return None
        return item

    def _take_lease(
        self, cluster: str, lease_id: str, trigger: Trigger, name: str
    ) -> Mapping[str, Any] | None:
        now = int(self._clock())
        item = {
            "pk": {"S": lease_key(cluster)},
            "lease_id": {"S": lease_id},
            "trigger": {"S": trigger.key},
            "execution_name": {"S": name},
            "taken_at": {"N": str(now)},
            "expires_at": {"N": str(now + self._settings.lease_seconds)},
            "joined_count": {"N": "0"},
        }
        return put_lease(self._ddb, self._table, item, now)

    def _join(self, cluster: str, holder: Mapping[str, Any], trigger: Trigger) -> RunDecision | None:
        holder_lease = holder.get("lease_id", {}).get("S", "")
        holder_name = holder.get("execution_name", {}).get("S", "")
        # A drill holding the lease names its own execution (of the drill state machine).
        holder_arn = holder.get("execution_arn", {}).get("S") or execution_arn(
            self._state_machine_arn, holder_name
        )
        if trigger.key in holder.get("joined", {}).get("SS", []):
            return RunDecision("duplicate", holder_arn, holder_lease)
        recorded = int(holder.get("joined_count", {}).get("N", "0")) < MAX_RECORDED_JOINS
        update = "ADD joined_count :one" + (", joined :key" if recorded else "")
        values: dict[str, Any] = {
            ":one": {"N": "1"},
            ":lease": {"S": holder_lease},
            ":trigger": {"S": trigger.key},
        }
        if recorded:
            values[":key"] = {"SS": [trigger.key]}
        try:
            self._ddb.update_item(
                TableName=self._table,
                Key={"pk": {"S": lease_key(cluster)}},
                UpdateExpression=update,
                ConditionExpression="lease_id = :lease AND NOT contains(joined, :trigger)",
                ExpressionAttributeValues=values,
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            current: Mapping[str, Any] = error.response.get("Item", {})  # type: ignore[assignment]
            if current.get("lease_id", {}).get("S") == holder_lease:
                return RunDecision("duplicate", holder_arn, holder_lease)
            return None  # the lease changed hands: take it again
        return RunDecision("joined", holder_arn, holder_lease)

    def _start(
        self,
        cluster: str,
        trigger: Trigger,
        reason: str,
        lease_id: str,
        name: str,
        duplicate: bool = False,
    ) -> RunDecision:
        run_input = {
            "cluster": cluster,
            "reason": reason,
            "trigger": {
                "source": trigger.source,
                "id": trigger.id,
                "time": trigger.time,
                "summary": dict(trigger.summary),
            },
            "lease_id": lease_id,
            "dry_run": self._settings.dry_run,
            "settle_seconds": self._settings.settle_seconds,
            "max_attempts": self._settings.max_attempts,
            "backoff_seconds": self._settings.backoff_seconds,
        }
        try:
            started = self._sfn.start_execution(
                stateMachineArn=self._state_machine_arn,
                name=name,
                input=json.dumps(run_input, sort_keys=True),
            )
        except ClientError as error:
            if error.response["Error"]["Code"] == "ExecutionAlreadyExists":
                # That run is over already (a late redelivery): never hold the lease for it.
                self.release(cluster, lease_id)
                return RunDecision("duplicate", execution_arn(self._state_machine_arn, name), lease_id)
            # Free the cluster again so the retried delivery can start the run.
            self.release(cluster, lease_id)
            raise
        return RunDecision("duplicate" if duplicate else "started", started["executionArn"], lease_id)


def release_lease(ddb: Any, table: str, cluster: str, lease_id: str) -> bool:
    """Delete the cluster's lease if ``lease_id`` still holds it; False when another does."""
    try:
        ddb.delete_item(
            TableName=table,
            Key={"pk": {"S": lease_key(cluster)}},
            ConditionExpression="lease_id = :lease",
            ExpressionAttributeValues={":lease": {"S": lease_id}},
        )
    except ClientError as error:
        if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
            return False
        raise
    return True


def put_lease(
    ddb: Any, table: str, item: Mapping[str, Any], now: int, lease_id: str = ""
) -> Mapping[str, Any] | None:
    """Write the cluster's lease if it is free (or expired, or already ``lease_id``'s).

    ``None`` when written; otherwise the holder's item. DynamoDB deletes expired items
    lazily, so an expired lease counts as free."""
    condition = "attribute_not_exists(pk) OR expires_at < :now"
    values: dict[str, Any] = {":now": {"N": str(now)}}
    if lease_id:
        condition += " OR lease_id = :lease"
        values[":lease"] = {"S": lease_id}
    try:
        ddb.put_item(
            TableName=table,
            Item=item,
            ConditionExpression=condition,
            ExpressionAttributeValues=values,
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    except ClientError as error:
        if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
            raise
        holder: Mapping[str, Any] = error.response.get("Item", {})  # type: ignore[assignment]
        return holder or {"lease_id": {"S": ""}}
    return None
