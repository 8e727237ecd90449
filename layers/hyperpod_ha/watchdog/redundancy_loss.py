"""The ``redundancy-lost`` incident, driven by the watchdog's ticks: a standby that dies sends
no event (HyperPod's ON/OFF programs run on the primary's changes only), so only a scheduled
check sees it.

Redundancy ``none`` (no ready standby) is recorded once, with its start, under
``redundancy#<cluster>`` (a conditional write: of two ticks at once the first start holds). Once
it has lasted ``RedundancyGraceMinutes``, every tick asks IncidentFunction to open the incident:
the OpsItem is de-duplicated per cluster and kind, and a tick after the first only sends the
"still open" reminder when one is due. A planned restart shorter than the grace pages nobody.
The first tick that sees a ready standby resolves the incident (only the ``redundancy-lost``
kind) and forgets the loss. ``unknown`` (not one active controller, or the evidence missing)
changes nothing: the verification run of that verdict is what tells."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from hyperpod_ha import state_table
from hyperpod_ha.human_time import duration
from hyperpod_ha.restore.record import incident_note
from hyperpod_ha.restore.settings import HOUR
from hyperpod_ha.status_records import StatusRecords
from hyperpod_ha.verdict import Verdict

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

    from hyperpod_ha.watchdog.tick import Tick

# The same name as hyperpod_ha.incidents.keys.KIND_REDUNDANCY_LOST (the watchdog does not import
# the incidents feature; a unit test keeps the two equal).
KIND_REDUNDANCY_LOST: Final = "redundancy-lost"
# A loss outlasting this is started again by the next tick (the item's TTL): the grace passes
# again before the next reminder, the open OpsItem stays the same.
_KEPT_SECONDS: Final = 14 * 86_400

Step = Literal["nothing", "start", "wait", "open", "resolve", "forget"]


@dataclass(frozen=True)
class Loss:
    since: int
    opened: bool = False


def next_step(level: str, loss: Loss | None, now: float, grace_seconds: int) -> Step:
    """What a tick does about redundancy ``level`` given the loss recorded (pure)."""
    if level == "none":
        if loss is None:
            return "start"
        return "open" if now - loss.since >= grace_seconds else "wait"
    if level in ("full", "reduced") and loss is not None:
        return "resolve" if loss.opened else "forget"
    return "nothing"


@dataclass(frozen=True)
class RedundancyWatch:
    """One tick's redundancy step: the record in the state table, and IncidentFunction's
    ``open``/``resolve`` through ``ask`` (a call that raises when the function failed)."""

    cluster: str
    dynamodb: DynamoDBClient
    table: str
    ask: Callable[[dict[str, Any]], dict[str, Any]]
    grace_seconds: int

    def check(self, tick: Tick, verdict: Verdict, now: float) -> Step:
        found = state_table.read_redundancy_loss(self.dynamodb, self.table, self.cluster)
        loss = Loss(found["since"], found["opened"]) if found else None
        step = next_step(verdict.redundancy, loss, now, self.grace_seconds)
        if step == "start":
            since = state_table.start_redundancy_loss(
                self.dynamodb, self.table, self.cluster, int(now), int(now) + _KEPT_SECONDS
            )
            loss = Loss(since)
            # A grace of 0 opens at once.
            step = "open" if next_step(verdict.redundancy, loss, now, self.grace_seconds) == "open" else step
        if step == "open" and loss is not None:
            restore = StatusRecords(self.dynamodb, self.table).read_one(self.cluster, "restore")
            self.ask(open_request(self.cluster, tick, verdict, loss.since, now, restore))
            if not loss.opened:
                state_table.mark_redundancy_incident(self.dynamodb, self.table, self.cluster, loss.since)
        elif step in ("resolve", "forget") and loss is not None:
            if step == "resolve":
                self.ask(resolve_request(self.cluster, tick, verdict))
            state_table.end_redundancy_loss(self.dynamodb, self.table, self.cluster, loss.since)
        return step


def _execution_id(tick: Tick) -> str:
    # Per tick, not per loss: the OpsItem is found by cluster and kind; the tick that created it
    # says "opened", a later one a reminder when due.
    return f"hyperpod-watchdog:{tick.id}"


def _trigger(tick: Tick) -> dict[str, str]:
    return {"source": "watchdog", "id": tick.id, "time": tick.scheduled_time}


def restore_lines(verdict: Verdict) -> list[str]:
    """What would restore each controller that is not a ready standby, in an operator's words."""
    lines = []
    for name, why in verdict.not_ready.items():
        entry = verdict.evidence.get(name) or {}
        target = entry.get("target") or entry.get("instance_id")
        shell = f" (aws ssm start-session --target {target})" if target else ""
        lines.append(f"{name}: {why}: to restore it, run `sudo systemctl start slurmctld` on {name}{shell}")
    return lines


def last_restore_lines(record: Mapping[str, Any] | None, since: int, now: float) -> list[str]:
    """What the last restore did, when it ran during this loss or within the hour before it (its
    actions, that restoring stopped and why): restores follow runs at once, so with a grace the
    incident opens after them and their own note (IncidentFunction's ``note``) found nothing open."""
    if not record or not isinstance(record.get("recorded_at"), int) or record["recorded_at"] < since - HOUR:
        return []
    if not (record.get("actions") or record.get("stopped") or record.get("blocked")):
        return []
    ago = duration(max(now - record["recorded_at"], 0))
    return [f"the last restore, {ago} ago: {line}" for line in incident_note(record)["lines"]]


def open_request(
    cluster: str,
    tick: Tick,
    verdict: Verdict,
    since: int,
    now: float,
    restore: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """IncidentFunction's ``open`` of the cluster's ``redundancy-lost`` incident. No verdict:
    the verdict is the runs' to count and keep; this is the watchdog's finding."""
    lost = (
        f"no standby has been ready for {duration(max(now - since, 0))}: one more failure stops the cluster"
    )
    active = f"{verdict.active_controller} is active ({verdict.name.value})"
    restored = last_restore_lines(restore, since, now)
    return {
        "action": "open",
        "cluster": cluster,
        "kind": KIND_REDUNDANCY_LOST,
        "verdict": "",
        "execution_id": _execution_id(tick),
        "problem": f"{lost}; {active}",
        "reasons": [lost, active, *restored, *restore_lines(verdict), *verdict.texts],
        "evidence": {key: dict(value) for key, value in verdict.evidence.items()},
        "trigger": _trigger(tick),
    }


def resolve_request(cluster: str, tick: Tick, verdict: Verdict) -> dict[str, Any]:
    """IncidentFunction's ``resolve`` of the ``redundancy-lost`` incident only."""
    ready = ", ".join(verdict.standbys)
    return {
        "action": "resolve",
        "cluster": cluster,
        "verdict": verdict.name.value,
        "kinds": [KIND_REDUNDANCY_LOST],
        "execution_id": _execution_id(tick),
        "reasons": [f"ready standby again: {ready} (redundancy {verdict.redundancy})", *verdict.texts],
        "evidence": {key: dict(value) for key, value in verdict.evidence.items()},
        "trigger": _trigger(tick),
    }
