"""What a chaos run found, the rule it passes by, and its table and JSON. Pure: built from what
the run collected (:mod:`.chaos`), so every rule is tested with hand-made results.

It passes when, after the final heal, the cluster is HEALTHY, every incident is resolved, no
lease is held, no problem had two OpsItems open at once and no execution failed from an
uncaught error.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from hyperpod_ha_dev.simulation.lab.chaos_plan import ChaosPlan, PlannedFault

# What the lab's healthy cluster gives (every controller up, each backup a ready standby).
HEALTHY: Final = "HEALTHY"
FULL: Final = "full"
RESOLVED: Final = "Resolved"


@dataclass(frozen=True)
class Observation:
    """One verdict: a watchdog tick's or a verification run's, at epoch seconds ``at``."""

    at: float
    source: str  # "tick" or "run"
    verdict: str | None
    redundancy: str | None = None
    reasons: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        verdict = self.verdict or "no verdict"
        return f"{verdict}/{self.redundancy}" if self.redundancy else verdict

    def departs(self, host: str, baseline_named: frozenset[str]) -> bool:
        """Not what the healthy cluster gives, or a reason names ``host`` (that the healthy
        cluster's reasons did not name)."""
        if self.verdict != HEALTHY or self.redundancy not in (FULL, None):
            return True
        return host not in baseline_named and any(host in reason for reason in self.reasons)


@dataclass(frozen=True)
class FaultOutcome:
    """A planned fault as it went: when it was injected and healed (epoch seconds; None when
    the lab refused it), the verdicts seen from its injection to the next one, the seconds to
    the first that departed from the healthy cluster's."""

    planned: PlannedFault
    injected_at: float | None
    healed_at: float | None
    detail: str = ""  # what the lab did, or why it refused
    heal_detail: str = ""
    verdicts: tuple[str, ...] = ()
    detection_seconds: float | None = None

    def to_json(self, started: float) -> dict[str, Any]:
        return {
            **self.planned.to_json(),
            "injected": self.injected_at is not None,
            "injected_after_seconds": _after(self.injected_at, started),
            "healed_after_seconds": _after(self.healed_at, started),
            "detail": self.detail,
            "heal_detail": self.heal_detail,
            "verdicts_seen": list(self.verdicts),
            "detection_seconds": _rounded(self.detection_seconds),
        }


def judge_fault(
    planned: PlannedFault,
    injected_at: float | None,
    healed_at: float | None,
    until: float,
    observations: Iterable[Observation],
    baseline_named: frozenset[str] = frozenset(),
    detail: tuple[str, str] = ("", ""),
) -> FaultOutcome:
    """The fault's outcome from every verdict observed: those from ``injected_at`` to ``until``
    (the next fault's injection, or the end) are its own."""
    if injected_at is None:
        return FaultOutcome(planned, None, healed_at, *detail)
    own = sorted((o for o in observations if injected_at <= o.at < until), key=lambda o: o.at)
    labels: list[str] = []
    for observation in own:
        if not labels or labels[-1] != observation.label:
            labels.append(observation.label)
    first = next((o for o in own if o.departs(planned.host, baseline_named)), None)
    detection = first.at - injected_at if first is not None else None
    return FaultOutcome(planned, injected_at, healed_at, *detail, tuple(labels), detection)


@dataclass(frozen=True)
class IncidentRecord:
    """One OpsItem of the stack: its problem (the incident kind), status, when it was opened and
    last changed (epoch seconds)."""

    ops_item_id: str
    kind: str
    status: str
    opened: float
    changed: float

    @property
    def resolved(self) -> bool:
        return self.status == RESOLVED

    def open_at(self, at: float) -> bool:
        return self.opened <= at and (not self.resolved or at < self.changed)

    def to_json(self) -> dict[str, Any]:
        return {"ops_item_id": self.ops_item_id, "kind": self.kind, "status": self.status}


def duplicates_by_problem(incidents: Sequence[IncidentRecord]) -> dict[str, int]:
    """Per problem, the OpsItems opened while another for the same problem was still open (a
    problem opened again after its incident was resolved is a new incident, not a duplicate)."""
    found: Counter[str] = Counter()
    for item in incidents:
        earlier = [o for o in incidents if o is not item and o.kind == item.kind and o.opened <= item.opened]
        if any(other.open_at(item.opened) for other in earlier):
            found[item.kind] += 1
    return dict(found)


@dataclass(frozen=True)
class ChaosResult:
    plan: ChaosPlan
    restore_mode: str
    started: float  # epoch seconds
    faults: tuple[FaultOutcome, ...]
    ticks: int
    runs_started: int
    incidents: tuple[IncidentRecord, ...]
    leases_held_at_end: int
    uncaught_failures: tuple[str, ...]  # "<execution>: <error>" of each
    restore_actions: tuple[Mapping[str, Any], ...]
    final: Observation | None  # the last verdict after the final heal
    final_heal: tuple[str, ...] = ()
    seconds: float = 0.0
    published: int = 0  # ON/OFF program messages published on the topic
    notes: tuple[str, ...] = field(default_factory=tuple)  # what the harness hit on its way

    @property
    def injected(self) -> list[FaultOutcome]:
        return [fault for fault in self.faults if fault.injected_at is not None]

    @property
    def incidents_open_at_end(self) -> int:
        return sum(1 for item in self.incidents if not item.resolved)

    @property
    def duplicate_ops_items(self) -> int:
        return sum(duplicates_by_problem(self.incidents).values())

    def failures(self) -> list[str]:
        """Why the run did not pass (empty when it did)."""
        found = []
        if self.final is None or self.final.verdict != HEALTHY:
            found.append(f"final verdict {self.final.label if self.final else 'none'}, not HEALTHY")
        if self.incidents_open_at_end:
            found.append(f"{self.incidents_open_at_end} incident(s) left open")
        if self.leases_held_at_end:
            found.append(f"{self.leases_held_at_end} lease(s) still held")
        if self.duplicate_ops_items:
            found.append(f"{self.duplicate_ops_items} duplicate OpsItem(s)")
        if self.uncaught_failures:
            found.append(f"{len(self.uncaught_failures)} execution(s) failed uncaught")
        return found

    @property
    def passed(self) -> bool:
        return not self.failures()

    def to_json(self) -> dict[str, Any]:
        detections = [f.detection_seconds for f in self.injected if f.detection_seconds is not None]
        return {
            "passed": self.passed,
            "failures": self.failures(),
            "seed": self.plan.seed,
            "minutes": self.plan.minutes,
            "restore_mode": self.restore_mode,
            "seconds": round(self.seconds, 1),
            "faults_planned": len(self.plan.faults),
            "faults_injected": len(self.injected),
            "faults": [fault.to_json(self.started) for fault in self.faults],
            "faults_detected": len(detections),
            "detection_seconds_max": _rounded(max(detections, default=None)),
            "watchdog_ticks": self.ticks,
            "runs_started": self.runs_started,
            "published": self.published,
            "incidents_opened": len(self.incidents),
            "incidents_resolved": len(self.incidents) - self.incidents_open_at_end,
            "incidents_open_at_end": self.incidents_open_at_end,
            "incidents": [item.to_json() for item in self.incidents],
            "duplicate_ops_items": self.duplicate_ops_items,
            "duplicate_ops_items_by_problem": duplicates_by_problem(self.incidents),
            "leases_held_at_end": self.leases_held_at_end,
            "uncaught_failures": len(self.uncaught_failures),
            "uncaught_failure_executions": list(self.uncaught_failures),
            "restore_actions": [dict(action) for action in self.restore_actions],
            "final_verdict": self.final.verdict if self.final else None,
            "final_redundancy": self.final.redundancy if self.final else None,
            "final_heal": list(self.final_heal),
            "notes": list(self.notes),
        }


def chaos_table(result: ChaosResult) -> str:
    """The run as people read it: one line per fault, then the counts and the verdict."""
    plan = result.plan
    state = "PASSED" if result.passed else "FAILED: " + "; ".join(result.failures())
    lines = [
        f"chaos run: seed {plan.seed}, {plan.minutes:g} min, restore {result.restore_mode}: {state}",
        f"{'#':>3}  {'at':>6}  {'fault':<21} {'host':<6} {'healed':>7}  {'detected':>9}  verdicts seen",
    ]
    for number, fault in enumerate(result.faults, 1):
        at = _after(fault.injected_at, result.started)
        healed = _after(fault.healed_at, result.started)
        detected = "-" if fault.detection_seconds is None else f"{fault.detection_seconds:.1f} s"
        seen = " > ".join(fault.verdicts) if fault.injected_at is not None else f"refused: {fault.detail}"
        lines.append(
            f"{number:>3}  {_clock(at):>6}  {fault.planned.fault:<21} {fault.planned.host:<6} "
            f"{_clock(healed):>7}  {detected:>9}  {seen}"
        )
    data = result.to_json()
    by_problem = ", ".join(f"{k} {v}" for k, v in data["duplicate_ops_items_by_problem"].items())
    actions = ", ".join(_action(a) for a in result.restore_actions) or "none"
    lines += [
        f"faults injected: {data['faults_injected']} of {data['faults_planned']} planned; "
        f"detected: {data['faults_detected']} (slowest {_seconds(data['detection_seconds_max'])})",
        f"watchdog ticks: {result.ticks}   runs started: {result.runs_started}   "
        f"ON/OFF messages published: {result.published}",
        f"incidents opened: {data['incidents_opened']}, resolved: {data['incidents_resolved']}, "
        f"left open: {data['incidents_open_at_end']}",
        f"duplicate OpsItems: {data['duplicate_ops_items']}" + (f" ({by_problem})" if by_problem else ""),
        f"leases held at end: {result.leases_held_at_end}   "
        f"executions failed uncaught: {len(result.uncaught_failures)}",
        f"restore actions: {actions}",
        f"final verdict: {result.final.label if result.final else 'none'} "
        f"(final heal: {'; '.join(result.final_heal) or 'nothing to repair'})",
    ]
    lines += [f"note: {note}" for note in result.notes]
    return "\n".join(lines)


def _action(action: Mapping[str, Any]) -> str:
    done = "restored" if action.get("restored") else "NOT restored"
    return f"{action.get('controller')} {action.get('kind')} ({done})"


def _after(at: float | None, started: float) -> float | None:
    return None if at is None else round(at - started, 1)


def _rounded(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else round(value, 1)


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} s"


def _clock(after: float | None) -> str:
    if after is None:
        return "-"
    minutes, seconds = divmod(int(after), 60)
    return f"{minutes}:{seconds:02d}"
