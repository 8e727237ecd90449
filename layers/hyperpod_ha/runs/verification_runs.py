"""One failover verification per cluster at a time.

A run holds the cluster's lease: an item in the state table written with a condition, with
a TTL so a lost run cannot block the cluster forever. The execution name is derived from
the cluster and the lease, and the lease id from the trigger's stable id, so a redelivered
trigger or a retried invocation can never start a second execution.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from hyperpod_ha import state_table
from hyperpod_ha.aws_errors import error_code
from hyperpod_ha.errors import InputRejected
from hyperpod_ha.lease import Lease, lease_id_for_trigger
from hyperpod_ha.request_fields import MAX_TEXT_CHARS, bounded_id, bounded_text
from hyperpod_ha.runs.models import RunDecision
from hyperpod_ha.runs.naming import execution_arn, execution_name, holder_execution_arn
from hyperpod_ha.runs.settings import RunSettings, VerificationRunsSettings
from hyperpod_ha.trigger import Trigger

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_stepfunctions import SFNClient

# The lease records the first joined triggers (their count and keys: `hyperpod-ha status`, a
# drill's report); past them a join writes nothing (a storm costs the lease no write).
MAX_RECORDED_JOINS = 100
# A run input is a few bounded fields (request_fields); Step Functions takes at most 256 KiB.
# JSON's escapes can still make a bounded text 6-12 times longer: this guard is checked last.
MAX_RUN_INPUT_BYTES = 128 * 1024
_MAX_SUMMARY_FIELDS = 16


class RunRequestRejected(InputRejected):
    """A trigger whose id or fields exceed their bounds: nothing is taken or started."""


def bounded_trigger(trigger: Trigger) -> Trigger:
    """``trigger`` with its id checked (:data:`~hyperpod_ha.request_fields.MAX_ID_CHARS`) and each
    text of its summary cut to an excerpt: whoever built it, the run input stays small."""
    bounded_id(trigger.id, "the trigger's id", RunRequestRejected)
    if len(trigger.summary) > _MAX_SUMMARY_FIELDS:
        raise RunRequestRejected(f"the trigger's summary has more than {_MAX_SUMMARY_FIELDS} fields")
    summary = {bounded_text(str(name), 64): _bounded_value(value) for name, value in trigger.summary.items()}
    return replace(trigger, summary=summary, time=bounded_text(trigger.time, 64))


def _bounded_value(value: object) -> Any:
    """A summary value: text (cut), a number, or a short list of texts (the watchdog's reasons)."""
    if isinstance(value, str):
        return bounded_text(value)
    if value is None or isinstance(value, int | float | bool):
        return value
    items = list(value) if isinstance(value, list | tuple) else None
    if items is not None and len(items) <= _MAX_SUMMARY_FIELDS and all(isinstance(i, str) for i in items):
        return [bounded_text(str(item)) for item in items]
    raise RunRequestRejected("the trigger's summary holds a value that is not text, a number or texts")


@dataclass(frozen=True)
class VerificationRuns:
    """Starts or joins the cluster's verification run."""

    dynamodb: DynamoDBClient
    stepfunctions: SFNClient
    table: str
    state_machine_arn: str
    settings: RunSettings
    clock: Callable[[], float] = time.time

    @classmethod
    def from_settings(
        cls, settings: VerificationRunsSettings, dynamodb: DynamoDBClient | None = None
    ) -> VerificationRuns:
        """The runs of one stack, with this process's clients (``dynamodb`` shared when given)."""
        import boto3

        return cls(
            dynamodb or boto3.client("dynamodb"),
            boto3.client("stepfunctions"),
            settings.state_table,
            settings.state_machine_arn,
            settings.runs,
        )

    def start_or_join(self, cluster: str, trigger: Trigger, reason: str) -> RunDecision:
        """Start the cluster's run for ``trigger``, or join the one running. Raises
        :class:`RunRequestRejected` before anything is written when a field exceeds its bound."""
        trigger = bounded_trigger(trigger)
        reason = bounded_text(reason, MAX_TEXT_CHARS)
        lease_id = lease_id_for_trigger(trigger)
        name = execution_name(cluster, lease_id)
        # Two passes at most: the lease may be released between our failed take and our join.
        for _ in range(2):
            # Read first: in a storm the lease is held, and a failed conditional put is a write too.
            holder = self._live_lease(cluster) or self._take_lease(cluster, lease_id, trigger, name)
            if holder is None:
                return self._start(cluster, trigger, reason, lease_id, name)
            if holder.lease_id == lease_id:
                # This very trigger took the lease before (a redelivery or a retry after a crash):
                # make sure its execution exists; StartExecution is idempotent for the same name and input.
                return self._start(cluster, trigger, reason, lease_id, name, duplicate=True)
            joined = self._join(cluster, holder, trigger)
            if joined is not None:
                return joined
        raise RuntimeError(f"the lease of cluster {cluster} kept changing while joining")

    def release(self, cluster: str, lease_id: str) -> bool:
        return state_table.release_lease(self.dynamodb, self.table, cluster, lease_id)

    def _live_lease(self, cluster: str) -> Lease | None:
        lease = state_table.read_lease(self.dynamodb, self.table, cluster)
        return None if lease is None or lease.expired(self.clock()) else lease

    def _take_lease(self, cluster: str, lease_id: str, trigger: Trigger, name: str) -> Lease | None:
        now = int(self.clock())
        lease = Lease.for_run(lease_id, trigger.key, name, now, self.settings.lease_seconds)
        return state_table.put_lease(self.dynamodb, self.table, cluster, lease)

    def _join(self, cluster: str, holder: Lease, trigger: Trigger) -> RunDecision | None:
        # A drill holding the lease names its own execution (of the drill state machine).
        holder_arn = holder_execution_arn(holder, self.state_machine_arn)
        if trigger.key in holder.joined:
            return RunDecision("duplicate", holder_arn, holder.lease_id)
        if holder.joined_count >= MAX_RECORDED_JOINS:
            # The lease records the first joins (count and keys); past them a join writes nothing:
            # in a storm, a trigger costs no write on the lease.
            return RunDecision("joined", holder_arn, holder.lease_id)
        joined = state_table.join_lease(self.dynamodb, self.table, cluster, holder.lease_id, trigger.key)
        if joined == "joined":
            return RunDecision("joined", holder_arn, holder.lease_id)
        if joined == "already joined":
            return RunDecision("duplicate", holder_arn, holder.lease_id)
        return None  # the lease changed hands: take it again

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
            "trigger": trigger.to_json(),
            "lease_id": lease_id,
            "dry_run": self.settings.dry_run,
            "settle_seconds": self.settings.settle_seconds,
            "max_attempts": self.settings.max_attempts,
            "backoff_seconds": self.settings.backoff_seconds,
            # A run waiting for maintenance keeps the lease this long past each wait.
            "lease_seconds": self.settings.lease_seconds,
        }
        body = json.dumps(run_input, sort_keys=True)
        if len(body.encode()) > MAX_RUN_INPUT_BYTES:
            self.release(cluster, lease_id)
            raise RunRequestRejected(f"the run input would exceed {MAX_RUN_INPUT_BYTES} bytes")
        try:
            started = self.stepfunctions.start_execution(
                stateMachineArn=self.state_machine_arn, name=name, input=body
            )
        except ClientError as error:
            # Either way the lease goes: a late redelivery's run is over already (never hold the
            # lease for it), and otherwise the retried delivery must find the cluster free.
            self.release(cluster, lease_id)
            if error_code(error) == "ExecutionAlreadyExists":
                return RunDecision("duplicate", execution_arn(self.state_machine_arn, name), lease_id)
            raise
        return RunDecision("duplicate" if duplicate else "started", started["executionArn"], lease_id)
