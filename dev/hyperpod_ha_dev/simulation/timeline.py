"""A run's timeline: its entries (a delivery to a function, a state entered or left, a verdict
with its reasons) and :class:`TimelineStream`, which tells each entry as the run makes it."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import boto3

from hyperpod_ha_cli.execution_events import exit_line
from hyperpod_ha_dev.embedded import delivery

__all__ = ["Follow", "TimelineEntry", "TimelineStream", "delivery_entry", "history_entry", "timeline_json"]


@dataclass
class TimelineEntry:
    seconds: float
    what: str
    detail: str = ""
    reasons: tuple[str, ...] = ()  # a verdict's, every one


def timeline_json(entry: TimelineEntry) -> dict[str, Any]:
    data: dict[str, Any] = {"seconds": round(entry.seconds, 2), "what": entry.what, "detail": entry.detail}
    if entry.reasons:
        data["reasons"] = list(entry.reasons)
    return data


Follow = Callable[[TimelineEntry], None]
"""Told each timeline entry as the run makes it: ``simulate`` and ``lab verify`` print it then,
not when the run has ended."""


@dataclass
class TimelineStream:
    """The timeline entries that appeared since the last :meth:`poll`, each told to ``follow``
    once, in the order they were seen: the deliveries to the functions, then each execution's
    new history events (``entry`` makes an event an entry, ``None`` for one the timeline skips)."""

    started: float
    follow: Follow
    entry: Callable[[dict[str, Any], float], TimelineEntry | None] = lambda event, started: history_entry(
        event, started
    )[0]
    deliveries: bool = True
    # Entries the run notes beside the executions (a drill's controllers), a list that grows.
    notes: Callable[[], Sequence[TimelineEntry]] = tuple
    _delivered: int = 0
    _noted: int = 0
    _events: dict[str, int] = field(default_factory=dict)

    def poll(self, executions: Sequence[str]) -> None:
        noted = self.notes()[self._noted :]
        self._noted += len(noted)
        for note in noted:
            self.follow(note)
        if self.deliveries:
            fresh = delivery.deliveries[self._delivered :]
            self._delivered += len(fresh)
            for item in fresh:
                self.follow(delivery_entry(item, self.started))
        sfn = boto3.client("stepfunctions")
        for arn in executions:
            events = sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
            for event in events[self._events.get(arn, 0) :]:
                entry = self.entry(dict(event), self.started)
                if entry is not None:
                    self.follow(entry)
            self._events[arn] = len(events)


def delivery_entry(item: delivery.Delivery, started: float) -> TimelineEntry:
    records = (item.result or {}).get("records", [])
    outcomes = ", ".join(str(r.get("outcome")) for r in records) or f"error: {item.error}"
    if item.function == "WatchdogFunction":
        result = item.result or {}
        outcome = f"{result.get('verdict')}: {result.get('outcome')}" if result else f"error: {item.error}"
        return TimelineEntry(item.at - started, "watchdog tick -> WatchdogFunction", outcome)
    source = "SNS notification" if item.function == "ControllerStatusFunction" else "EventBridge event"
    return TimelineEntry(item.at - started, f"{source} -> {item.function}", outcomes)


def history_entry(
    event: dict[str, Any], started: float
) -> tuple[TimelineEntry | None, Mapping[str, Any] | None]:
    """The timeline's entry for one history event, and the verdict it decided, if any."""
    at = event["timestamp"].timestamp() - started
    entered = event.get("stateEnteredEventDetails")
    if entered:
        return TimelineEntry(at, entered["name"]), None
    exited = event.get("stateExitedEventDetails")
    if exited:
        line = exit_line(exited["name"], json.loads(exited.get("output") or "null"))
        if line is None:
            return None, None
        # Every reason, in the detail as before (the lab's checks read it) and on their own.
        detail = f"{line.detail}: {'; '.join(line.reasons)}" if line.what == "verdict" else line.detail
        return TimelineEntry(at, f"  {line.what}", detail, line.reasons), line.verdict
    failed = event.get("executionFailedEventDetails")
    if failed:
        return TimelineEntry(at, "execution failed", f"{failed.get('error')}"), None
    if event["type"] == "ExecutionSucceeded":
        return TimelineEntry(at, "execution succeeded"), None
    return None, None
