"""EvaluateVerdictFunction: the controllers' reports -> one verdict (pure; no AWS calls).

Input: ``{"reports": [<report>, ...], "attempt": <int, optional>}``, the health-check Map's
output. Output: ``{"verdict", "verified", "reasons", "active_controller",
"configured_primary", "evidence", "attempt"}`` (``hyperpod_ha.verdict.Verdict.to_json``).
With the workflow's counters (``max_attempts``, ``started_at``, ``trigger`` with its ``time``,
``margin_seconds``, ``deadline_seconds``, ``backoff_seconds``) also ``next``, ``wait_seconds``,
``converged_by`` and ``slurmctld_timeout`` (``hyperpod_ha.convergence``).

Environment: ``EXPECTED_STATE_FSTYPES`` (optional, comma-separated, e.g. ``lustre``): file
system types StateSaveLocation must be on; empty or unset means no expectation.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from hyperpod_ha.convergence import ConvergenceInputError, configured_timeout, next_step
from hyperpod_ha.observability import logger, tracer
from hyperpod_ha.settings import setting
from hyperpod_ha.verdict import VerdictInputError, VerdictPolicy, evaluate, reports_from_json


def _policy() -> VerdictPolicy:
    raw = setting("EXPECTED_STATE_FSTYPES", "")
    return VerdictPolicy(expected_state_fstypes=frozenset(t.strip() for t in raw.split(",") if t.strip()))


def _attempt(event: dict[str, Any]) -> int | None:
    attempt = event.get("attempt")
    if attempt is None:
        return None
    if isinstance(attempt, bool) or not isinstance(attempt, int):
        raise VerdictInputError("attempt is not an integer")
    return attempt


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if not isinstance(event, dict) or "reports" not in event:
        raise VerdictInputError("input has no reports")
    attempt = _attempt(event)
    reports = reports_from_json(event["reports"])
    verdict = evaluate(reports, _policy(), attempt=attempt)
    result = verdict.to_json()
    if "max_attempts" in event:
        result.update(_next(verdict.name.value, attempt, configured_timeout(reports), event))
    logger.info(
        "verdict",
        extra={
            "verdict": verdict.name.value,
            "active_controller": verdict.active_controller,
            "reasons": list(verdict.reasons),
            "next": result.get("next"),
            "wait_seconds": result.get("wait_seconds"),
            "converged_by": result.get("converged_by"),
        },
    )
    return result


def _next(verdict: str, attempt: int | None, timeout: int | None, event: dict[str, Any]) -> dict[str, object]:
    trigger = event.get("trigger")
    trigger_at = trigger.get("time", "") if isinstance(trigger, dict) else ""
    if not isinstance(trigger_at, str):
        raise ConvergenceInputError("trigger.time is not a string")
    try:
        step = next_step(
            verdict,
            attempt=attempt or 1,
            max_attempts=int(event["max_attempts"]),
            started_at=str(event.get("started_at", "")),
            trigger_at=trigger_at,
            slurmctld_timeout=timeout,
            margin_seconds=float(event.get("margin_seconds", 0)),
            deadline_seconds=float(event.get("deadline_seconds", 1800)),
            backoff_seconds=float(event.get("backoff_seconds", 0)),
            now=dt.datetime.now(dt.UTC),
        )
    except (TypeError, ValueError) as error:
        raise ConvergenceInputError(f"bad convergence input: {error}") from None
    return step.to_json()
