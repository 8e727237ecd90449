"""The watchdog's early warnings: each tick's figures against the last tick's sample, the
warnings they give, and their incidents.

A warning holding at a tick is recorded with its start (``warning#<cluster>`` in the state
table, with the sample the next tick compares with). Once it has held for its window
(``OverloadWindowMinutes`` for ``controller-overloaded``; none for ``accounting-at-risk``: the
harm comes at a rate already measured), every tick asks IncidentFunction to open its incident:
the OpsItem is de-duplicated per cluster and kind, a later tick only sends the "still open"
reminder when one is due. The first tick without it resolves the incident (that kind only) and
forgets it. A warning never starts a run nor a restore: the verdict's rules do that."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

from hyperpod_ha import state_table
from hyperpod_ha.controllers.models import ControllerReport
from hyperpod_ha.early_warning.figures import controller_figures
from hyperpod_ha.early_warning.models import (
    KIND_OVERLOADED,
    KINDS,
    ControllerFigures,
    EarlyWarning,
    Judged,
    Sample,
)
from hyperpod_ha.early_warning.rules import early_warnings
from hyperpod_ha.early_warning.settings import WarningThresholds
from hyperpod_ha.errors import InputRejected
from hyperpod_ha.json_input import load_json
from hyperpod_ha.status_records import StatusRecords

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


class Tick(Protocol):
    """The watchdog's tick, as far as a warning's incident names it (the watchdog imports this
    feature, not the other way)."""

    @property
    def id(self) -> str: ...

    @property
    def scheduled_time(self) -> str: ...


Step = Literal["nothing", "wait", "open", "resolve", "forget"]
# A record no tick has rewritten for this long is a watchdog that stopped: the next starts afresh.
_KEPT_SECONDS: Final = 86_400


@dataclass(frozen=True)
class Held:
    since: int
    opened: bool = False


@dataclass(frozen=True)
class Outcome:
    """One tick's early warnings: every controller's figures, the warnings and each kind's step."""

    figures: tuple[ControllerFigures, ...]
    warnings: tuple[EarlyWarning, ...]
    steps: Mapping[str, Step] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "warnings": [warning.to_json() for warning in self.warnings],
            "figures": [one.to_json() for one in self.figures],
            "steps": dict(self.steps),
        }


def next_step(present: bool, held: Held | None, now: float, window_seconds: int) -> Step:
    """What a tick does about one kind of warning (pure)."""
    if present:
        since = held.since if held else now
        return "open" if now - since >= window_seconds else "wait"
    if held is None:
        return "nothing"
    return "resolve" if held.opened else "forget"


class _Unreadable(InputRejected):
    """The stored record is not this code's (another version's): started afresh."""


@dataclass(frozen=True)
class EarlyWarningWatch:
    cluster: str
    dynamodb: DynamoDBClient
    table: str
    # IncidentFunction's open and resolve; None: no incident (the figures and steps still kept).
    ask: Callable[[dict[str, Any]], dict[str, Any]] | None
    thresholds: WarningThresholds = field(default_factory=WarningThresholds)

    def check(self, tick: Tick, verdict: Judged, reports: Sequence[ControllerReport], now: float) -> Outcome:
        sample, held = self._read()
        figures, new_sample = controller_figures(verdict, reports, sample)
        warnings = early_warnings(figures, self.thresholds)
        present = {warning.kind: warning for warning in warnings}
        steps: dict[str, Step] = {}
        kept: dict[str, Held] = {}
        for kind in KINDS:
            window = self.thresholds.window_seconds if kind == KIND_OVERLOADED else 0
            step = next_step(kind in present, held.get(kind), now, window)
            steps[kind] = step
            if step in ("wait", "open"):
                before = held.get(kind)
                kept[kind] = Held(before.since if before else int(now), before.opened if before else False)
        # Written before any incident call: a failed call leaves the windows as they are.
        self._write(new_sample or sample, kept, now)
        outcome = Outcome(figures, warnings, steps)
        StatusRecords(self.dynamodb, self.table).put(self.cluster, "warnings", outcome.to_json())
        if self.ask is not None:
            self._tell(self.ask, tick, verdict, steps, present, kept, new_sample or sample, now)
        return outcome

    def _tell(
        self,
        ask: Callable[[dict[str, Any]], dict[str, Any]],
        tick: Tick,
        verdict: Judged,
        steps: Mapping[str, Step],
        present: Mapping[str, EarlyWarning],
        kept: dict[str, Held],
        sample: Sample | None,
        now: float,
    ) -> None:
        for kind, step in steps.items():
            if step == "open":
                ask(open_request(self.cluster, tick, verdict, present[kind], kept[kind].since, now))
                if not kept[kind].opened:
                    kept[kind] = Held(kept[kind].since, opened=True)
                    self._write(sample, kept, now)
            elif step == "resolve":
                ask(resolve_request(self.cluster, tick, verdict, kind))

    def _read(self) -> tuple[Sample | None, dict[str, Held]]:
        found = state_table.read_warnings(self.dynamodb, self.table, self.cluster) or {}
        try:
            sample = Sample.from_json(load_json(found.get("sample", "null"), _Unreadable, what="the sample"))
            kinds = load_json(found.get("kinds", "{}"), _Unreadable, what="the warnings held")
        except _Unreadable:
            return None, {}
        held = {}
        if isinstance(kinds, Mapping):
            for kind in KINDS:
                entry = kinds.get(kind)
                if isinstance(entry, Mapping) and isinstance(entry.get("since"), int):
                    held[kind] = Held(entry["since"], entry.get("opened") is True)
        return sample, held

    def _write(self, sample: Sample | None, held: Mapping[str, Held], now: float) -> None:
        kinds = {kind: {"since": one.since, "opened": one.opened} for kind, one in held.items()}
        state_table.write_warnings(
            self.dynamodb,
            self.table,
            self.cluster,
            json.dumps(sample.to_json() if sample else None),
            json.dumps(kinds),
            int(now) + _KEPT_SECONDS,
        )


def _execution_id(tick: Tick) -> str:
    return f"hyperpod-watchdog:{tick.id}"


def _trigger(tick: Tick) -> dict[str, str]:
    return {"source": "watchdog", "id": tick.id, "time": tick.scheduled_time}


def open_request(
    cluster: str, tick: Tick, verdict: Judged, warning: EarlyWarning, since: int, now: float
) -> dict[str, Any]:
    """IncidentFunction's ``open`` of the warning's incident (no verdict: the watchdog's finding)."""
    from hyperpod_ha.human_time import duration

    held = f"held for {duration(max(now - since, 0))}" if now > since else "seen at this check"
    codes = f"codes: {', '.join(warning.codes)}"
    return {
        "action": "open",
        "cluster": cluster,
        "kind": warning.kind,
        "verdict": "",
        "execution_id": _execution_id(tick),
        "problem": warning.headline,
        "reasons": [*warning.reasons, f"{held}; {codes}", *verdict.texts],
        # The verdict's entry of that controller (who it is, how to reach it) with its figures.
        "evidence": {
            warning.controller: {**verdict.evidence.get(warning.controller, {}), **warning.figures.to_json()}
        },
        "trigger": _trigger(tick),
    }


def resolve_request(cluster: str, tick: Tick, verdict: Judged, kind: str) -> dict[str, Any]:
    """IncidentFunction's ``resolve`` of that kind only."""
    return {
        "action": "resolve",
        "cluster": cluster,
        "verdict": verdict.name.value,
        "kinds": [kind],
        "execution_id": _execution_id(tick),
        "reasons": [f"{kind}: no longer seen at this check", *verdict.texts],
        "evidence": {key: dict(value) for key, value in verdict.evidence.items()},
        "trigger": _trigger(tick),
    }
