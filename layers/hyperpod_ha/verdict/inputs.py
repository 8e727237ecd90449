"""What EvaluateVerdictFunction is given, decoded from the workflow's JSON.

``{"reports": [<report>, ...], "attempt": <int, optional>}``, the health-check Map's output;
when the workflow loops, also its counters: ``max_attempts``, ``started_at``, ``trigger``
with its ``time``, ``margin_seconds``, ``deadline_seconds``, ``backoff_seconds``. The trigger's
``summary.reported`` (what HyperPod itself said, e.g. slurmdbd Unhealthy) joins the reasons;
discovery's ``accounting`` gives the cluster's ``SlurmConfigStrategy`` (optional); discovery's
``maintenance`` with the workflow's ``maintenance_wait`` and its bounds, whether the cluster is
being updated (optional, :mod:`hyperpod_ha.verdict.maintenance`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from hyperpod_ha.controllers.errors import ReportRejected
from hyperpod_ha.controllers.models import ControllerReport, ReportStatus
from hyperpod_ha.redaction import scrub_text
from hyperpod_ha.slurm import TEXT_LIMIT, excerpt
from hyperpod_ha.verdict.maintenance import MaintenanceWait
from hyperpod_ha.verdict.models import MAX_REPORTS, ConvergenceInputError, VerdictInputError
from hyperpod_ha.verdict.reasons import Reason, ReasonCode


def reports_from_json(items: object) -> list[ControllerReport]:
    """Reports as the workflow's Map returns them. An entry that is not a report (a caught
    error, a malformed object) becomes an unchecked report saying so, never a crash."""
    if not isinstance(items, list):
        raise VerdictInputError("reports is not a list")
    reports: list[ControllerReport] = []
    for position, item in enumerate(items[:MAX_REPORTS]):
        try:
            reports.append(ControllerReport.from_json(item))
        except ReportRejected as problem:
            reports.append(_unreadable(position, item, str(problem)))
    return reports


def _unreadable(position: int, item: object, problem: str) -> ControllerReport:
    instance_id = f"report-{position}"
    reason = f"report unreadable: {problem}"
    if isinstance(item, Mapping):
        if isinstance(item.get("instance_id"), str) and item["instance_id"]:
            instance_id = item["instance_id"][:TEXT_LIMIT]
        if isinstance(item.get("Error"), str):
            # Step Functions' Catch output: {"Error": <errorType>, "Cause": <JSON text>}
            reason = f"health check failed: {item['Error']}"
    return ControllerReport(instance_id=instance_id, status=ReportStatus.PROBE_FAILED, reason=excerpt(reason))


@dataclass(frozen=True)
class Counters:
    """The workflow's loop counters; times stay text until a verdict needs them."""

    max_attempts: int
    started_at: str
    trigger_at: str
    margin_seconds: float
    deadline_seconds: float
    backoff_seconds: float

    @classmethod
    def from_event(cls, event: Mapping[str, Any]) -> Counters:
        trigger = event.get("trigger")
        trigger_at = trigger.get("time", "") if isinstance(trigger, dict) else ""
        if not isinstance(trigger_at, str):
            raise ConvergenceInputError("trigger.time is not a string")
        try:
            return cls(
                max_attempts=int(event["max_attempts"]),
                started_at=str(event.get("started_at", "")),
                trigger_at=trigger_at,
                margin_seconds=float(event.get("margin_seconds", 0)),
                deadline_seconds=float(event.get("deadline_seconds", 1800)),
                backoff_seconds=float(event.get("backoff_seconds", 0)),
            )
        except (TypeError, ValueError) as error:
            raise ConvergenceInputError(f"bad convergence input: {error}") from None


_STRATEGY: Final = re.compile(r"[A-Za-z]{1,32}")
# HyperPod's own words are one short line; the execution input is ours, but bounded anyway.
REPORTED_LIMIT = 200


def reported_by_trigger(event: Mapping[str, Any]) -> tuple[Reason, ...]:
    """What the trigger's source reported (``trigger.summary.reported``), bounded and scrubbed;
    ``()`` when there is none or it is not text."""
    trigger = event.get("trigger")
    summary = trigger.get("summary") if isinstance(trigger, Mapping) else None
    reported = summary.get("reported") if isinstance(summary, Mapping) else None
    if not isinstance(reported, str) or not reported.strip():
        return ()
    return (Reason(ReasonCode.HYPERPOD_REPORTED, excerpt(scrub_text(reported.strip()[:REPORTED_LIMIT]))),)


def config_strategy(event: Mapping[str, Any]) -> str | None:
    """``accounting.config_strategy`` as discovery passed it on (``SlurmConfigStrategy``: a
    word), or None when there is none or it is not one."""
    accounting = event.get("accounting")
    strategy = accounting.get("config_strategy") if isinstance(accounting, Mapping) else None
    return strategy if isinstance(strategy, str) and _STRATEGY.fullmatch(strategy) else None


@dataclass(frozen=True)
class VerdictRequest:
    reports: list[ControllerReport]
    attempt: int | None
    counters: Counters | None  # None: a single check, no loop
    reported: tuple[Reason, ...] = ()  # the trigger's source's own words
    config_strategy: str | None = None  # the cluster's SlurmConfigStrategy, when discovery read one
    maintenance: MaintenanceWait | None = None  # None: not told (a single check)

    @classmethod
    def from_event(cls, event: object) -> VerdictRequest:
        if not isinstance(event, dict) or "reports" not in event:
            raise VerdictInputError("input has no reports")
        attempt = event.get("attempt")
        if attempt is not None and (isinstance(attempt, bool) or not isinstance(attempt, int)):
            raise VerdictInputError("attempt is not an integer")
        reports = reports_from_json(event["reports"])
        counters = Counters.from_event(event) if "max_attempts" in event else None
        maintenance = MaintenanceWait.from_event(event) if counters is not None else None
        return cls(
            reports, attempt, counters, reported_by_trigger(event), config_strategy(event), maintenance
        )
