"""The cluster's lease as a roll-out holds it (DynamoDB, the state table).

A roll-out restarts slurmdbd on every controller, one after another: beside a drill (which moves
control on purpose and checks accounting), a restore (which starts slurmctld and checks what it
sees) or a verification run (which would see slurmdbd away and call it DEGRADED) it would make
both wrong. So it takes the cluster's lease, kind ``rollout``, as they do, and they see it: a
restore's own take fails ("a rollout holds the cluster"), the watchdog names the holder, a trigger
joins the roll-out. A roll-out is no execution: it holds the lease for its invocation, which must
have ended when the lease expires (a crashed or timed-out roll-out frees the cluster by itself).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from hyperpod_ha.lease import Lease, lease_id_for_rollout
from hyperpod_ha.rotation.errors import ClusterBusy, RolloutRefused
from hyperpod_ha.state_table import put_lease, read_lease, release_lease

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# Past the invocation's own end: a clock a little behind DynamoDB's never frees the cluster early.
SLACK_SECONDS: Final = 60


@dataclass(frozen=True)
class Invocation:
    """The rotation function's invocation that holds the lease: its function's ARN, its request
    id and how long it may still run (Lambda's context)."""

    function_arn: str
    request_id: str
    remaining_seconds: float


def refusal(holder: Lease) -> ClusterBusy | RolloutRefused:
    """Why the roll-out does not start while ``holder`` holds the cluster: a run or another
    roll-out ends within minutes (:class:`ClusterBusy`: it is retried); a drill or a restore acts
    on the controllers on purpose (:class:`RolloutRefused`)."""
    who = holder.execution_arn or holder.execution_name
    if holder.kind in ("drill", "restore"):
        return RolloutRefused(
            f"a {holder.kind} holds the cluster ({who}): no roll-out while it acts on the controllers; "
            "roll out again once it has ended",
            holder=holder.kind,
        )
    what = "a verification run" if holder.kind == "run" else "another roll-out"
    return ClusterBusy(
        f"{what} holds the cluster ({who}): the roll-out waits for it (a rotation is retried by "
        "Secrets Manager; invoke the roll-out again in a few minutes)",
        holder=holder.kind,
    )


@dataclass(frozen=True)
class RolloutLease:
    dynamodb: DynamoDBClient
    table: str
    cluster: str
    clock: Callable[[], float] = time.time

    def take(self, key: str, invocation: Invocation) -> Lease:
        """The cluster held for the roll-out of ``key`` (a rotation's token, or the request's id);
        a retry of the same roll-out takes its own lease again. Raises :func:`refusal`'s error
        when another holder has it."""
        now = int(self.clock())
        lease = Lease.for_rollout(
            lease_id_for_rollout(key),
            invocation.function_arn,
            invocation.request_id,
            now,
            now + math.ceil(max(invocation.remaining_seconds, 0)) + SLACK_SECONDS,
        )
        holder = put_lease(self.dynamodb, self.table, self.cluster, lease, retake=True)
        if holder is not None:
            raise refusal(holder)
        return lease

    def release(self, lease: Lease) -> int:
        """Free the cluster if ``lease`` still holds it; how many triggers joined it meanwhile."""
        held = read_lease(self.dynamodb, self.table, self.cluster)
        joined = held.joined_count if held is not None and held.lease_id == lease.lease_id else 0
        release_lease(self.dynamodb, self.table, self.cluster, lease.lease_id)
        return joined
