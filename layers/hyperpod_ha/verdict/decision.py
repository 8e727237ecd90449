"""One step of a verification run: the verdict and, when the workflow loops, what it does next.

Output: :meth:`Verdict.to_json <hyperpod_ha.verdict.models.Verdict.to_json>`, with the
workflow's counters also :meth:`NextStep.to_json <hyperpod_ha.verdict.models.NextStep.to_json>`
(``next``, ``wait_seconds``, ``converged_by``, ``slurmctld_timeout``) and, when the workflow
says what discovery saw of maintenance, ``maintenance`` (:mod:`.maintenance`): while the cluster
is being updated, ``next`` is ``wait-for-maintenance``."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any

from hyperpod_ha.verdict import maintenance
from hyperpod_ha.verdict.convergence import next_step
from hyperpod_ha.verdict.evaluation import evaluate
from hyperpod_ha.verdict.inputs import VerdictRequest
from hyperpod_ha.verdict.models import (
    DEFAULT_SLURMCTLD_TIMEOUT,
    VERIFIED,
    ConvergenceInputError,
    Next,
    NextStep,
    Verdict,
)
from hyperpod_ha.verdict.observation import configured_timeout
from hyperpod_ha.verdict.reasons import codes, texts
from hyperpod_ha.verdict.settings import VerdictPolicy


def judge(request: VerdictRequest, policy: VerdictPolicy) -> Verdict:
    """The request's verdict (what :func:`decide` tells and steps on)."""
    return evaluate(request.reports, policy, attempt=request.attempt, config_strategy=request.config_strategy)


def decide(
    request: VerdictRequest,
    policy: VerdictPolicy,
    now: dt.datetime | None = None,
    *,
    verdict: Verdict | None = None,
) -> dict[str, Any]:
    """``verdict``: :func:`judge`'s of this request when the caller has it already
    (EvaluateVerdictFunction weighs the early warnings on it too): judged once."""
    if verdict is None:
        verdict = judge(request, policy)
    result = verdict.to_json()
    # The rules judge the controllers' evidence only; what the trigger's source reported
    # (HyperPod's slurmdbd health) is told beside their reasons, never weighed by them.
    told = {reason.text for reason in verdict.reasons}
    reasons = [*verdict.reasons, *(r for r in request.reported if r.text not in told)]
    result.update(reasons=texts(reasons), reason_codes=codes(reasons))
    counters = request.counters
    if counters is None:
        return result
    now = now or dt.datetime.now(dt.UTC)
    timeout = configured_timeout(request.reports)
    plan = maintenance.plan(request.maintenance, now) if request.maintenance else None
    if plan is not None:
        reasons = [*plan.notes(), *reasons]
        result.update(reasons=texts(reasons), reason_codes=codes(reasons))
        result["maintenance"] = plan.to_json()
        if plan.waiting or plan.expired:
            final: Next = "verified" if verdict.name in VERIFIED else "not-verified"
            waited = NextStep(
                "wait-for-maintenance" if plan.waiting else final,
                plan.wait_seconds,
                None,
                timeout or DEFAULT_SLURMCTLD_TIMEOUT,
            )
            return {**result, **waited.to_json()}
        if plan.ended_at is not None:
            # After maintenance the cluster gets its own convergence window, from the end seen.
            ended = plan.ended_at.isoformat()
            counters = replace(counters, started_at=ended, trigger_at=ended)
    try:
        step = next_step(
            verdict.name.value,
            attempt=request.attempt or 1,
            max_attempts=counters.max_attempts,
            started_at=counters.started_at,
            trigger_at=counters.trigger_at,
            slurmctld_timeout=timeout,
            margin_seconds=counters.margin_seconds,
            deadline_seconds=counters.deadline_seconds,
            backoff_seconds=counters.backoff_seconds,
            now=now,
        )
    except ValueError as error:  # a NaN duration, say: still the workflow's bad input
        raise ConvergenceInputError(f"bad convergence input: {error}") from None
    return {**result, **step.to_json()}
