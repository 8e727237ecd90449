"""The watchdog: a scheduled check of every controller, for failures that send no event.

HyperPod's node health events cover GPU and Trainium instances only, cluster events need
continuous provisioning, and the ON/OFF programs that publish to SNS live on FSx: a cluster
can go down with no trigger at all. On each tick the watchdog runs the same probe as the
workflow on every controller, at once, and decides the verdict with the same rules. Verified:
nothing else happens (no Standard workflow execution). Not verified: the verification workflow
is started through the cluster's lease like any other trigger, so one run and one incident
follow. The watchdog remembers that; its first verified tick afterwards starts one more run,
whose verified verdict resolves the incident even when the recovery published nothing either.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from hyperpod_ha.cluster import ClusterControllers
from hyperpod_ha.convergence import trigger_time
from hyperpod_ha.health import ControllerCheckThrottled, ControllerNode, ControllerReport, ReportStatus
from hyperpod_ha.verdict import Verdict, VerdictPolicy, evaluate
from hyperpod_ha.verification_runs import Trigger, VerificationRuns

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# The schedule's Input names its source; Scheduler fills in the context attributes.
TICK_SOURCE: Final = "hyperpod-ha.watchdog"
# Session Manager starts are rate limited (a few per second): a few controllers at a time.
MAX_PARALLEL_CHECKS: Final = 4
_TICK_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")


class TickRejected(ValueError):
    """The invocation is not a watchdog tick from this stack's schedule. Safe to log."""


@dataclass(frozen=True)
class Tick:
    """One scheduled check: Scheduler's execution id (kept across its retries) and time."""

    id: str
    scheduled_time: str


def parse_tick(event: object) -> Tick:
    if not isinstance(event, Mapping):
        raise TickRejected("the tick is not a JSON object")
    if event.get("source") != TICK_SOURCE:
        raise TickRejected(f"source is not {TICK_SOURCE!r}")
    tick_id = event.get("tick_id")
    if not isinstance(tick_id, str) or not _TICK_ID.match(tick_id) or tick_id.startswith("<"):
        raise TickRejected("tick_id is missing or not an id (is the schedule's Input templated?)")
    scheduled = trigger_time(event.get("scheduled_time"))
    if not scheduled:
        raise TickRejected("scheduled_time is missing or not an ISO 8601 time")
    return Tick(tick_id, scheduled)


@dataclass(frozen=True)
class TickResult:
    outcome: str  # verified, started, joined, duplicate
    verdict: Verdict
    controllers: int
    execution_arn: str | None = None
    recovery: bool = False  # verified again after a failure the watchdog found

    def to_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "recovery": self.recovery,
            "verdict": self.verdict.name.value,
            "reasons": list(self.verdict.reasons[:5]),
            "controllers": self.controllers,
            "execution_arn": self.execution_arn,
        }


def check_every_controller(
    found: ClusterControllers, check: Callable[[ControllerNode], ControllerReport]
) -> list[ControllerReport]:
    nodes = [ControllerNode.from_json(controller.to_json()) for controller in found.controllers]
    if not nodes:
        return []
    with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL_CHECKS, len(nodes))) as pool:
        return list(pool.map(lambda node: _checked(node, check), nodes))


def _checked(node: ControllerNode, check: Callable[[ControllerNode], ControllerReport]) -> ControllerReport:
    try:
        return check(node)
    except ControllerCheckThrottled as error:
        # Not retried here: the workflow's checks retry throttling with backoff.
        return ControllerReport(
            instance_id=node.instance_id,
            status=ReportStatus.PROBE_FAILED,
            group=node.group,
            node_status=node.status,
            target=node.target,
            reason=str(error)[:200],
        )


class FoundFailures:
    """The watchdog's memory (one item in the state table): it found the cluster not verified."""

    def __init__(self, dynamodb: DynamoDBClient, table: str, ttl_seconds: int = 14 * 86400) -> None:
        self._ddb = dynamodb
        self._table = table
        self._ttl_seconds = ttl_seconds

    @staticmethod
    def _key(cluster: str) -> dict[str, Any]:
        return {"pk": {"S": f"watchdog#{cluster}"}}

    def remember(self, cluster: str, tick: Tick, verdict: str, now: float) -> None:
        item = {
            **self._key(cluster),
            "tick_id": {"S": tick.id},
            "verdict": {"S": verdict},
            "expires_at": {"N": str(int(now) + self._ttl_seconds)},
        }
        self._ddb.put_item(TableName=self._table, Item=item)

    def pending(self, cluster: str) -> bool:
        found = self._ddb.get_item(TableName=self._table, Key=self._key(cluster), ConsistentRead=True)
        return "Item" in found

    def forget(self, cluster: str) -> None:
        self._ddb.delete_item(TableName=self._table, Key=self._key(cluster))


class Watchdog:
    def __init__(
        self,
        cluster: str,
        discover: Callable[[], ClusterControllers],
        check: Callable[[ControllerNode], ControllerReport],
        runs: VerificationRuns,
        found: FoundFailures,
        clock: Callable[[], float],
        policy: VerdictPolicy | None = None,
    ) -> None:
        self._cluster = cluster
        self._discover = discover
        self._check = check
        self._runs = runs
        self._found = found
        self._clock = clock
        self._policy = policy or VerdictPolicy()

    def tick(self, tick: Tick) -> TickResult:
        reports = check_every_controller(self._discover(), self._check)
        verdict = evaluate(reports, self._policy)
        if verdict.verified:
            if not self._found.pending(self._cluster):
                return TickResult("verified", verdict, len(reports))
            # Recovered: a verified run is what resolves the incident the failure opened.
            reason = f"watchdog: {verdict.name.value} again after a failure it found"
            decision = self._runs.start_or_join(self._cluster, self._trigger(tick, verdict), reason)
            self._found.forget(self._cluster)
            return TickResult(decision.outcome, verdict, len(reports), decision.execution_arn, recovery=True)
        decision = self._runs.start_or_join(
            self._cluster, self._trigger(tick, verdict), _reason(verdict, reports)
        )
        self._found.remember(self._cluster, tick, verdict.name.value, self._clock())
        return TickResult(decision.outcome, verdict, len(reports), decision.execution_arn)

    @staticmethod
    def _trigger(tick: Tick, verdict: Verdict) -> Trigger:
        return Trigger(
            source="watchdog",
            id=tick.id,
            summary={"verdict": verdict.name.value, "reasons": list(verdict.reasons[:3])},
            time=tick.scheduled_time,
        )


def _reason(verdict: Verdict, reports: Sequence[ControllerReport]) -> str:
    first = verdict.reasons[0] if verdict.reasons else f"{len(reports)} controllers checked"
    return f"watchdog: {verdict.name.value} ({first[:200]})"
