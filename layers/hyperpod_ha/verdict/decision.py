"""One step of a verification run: the verdict and, when the workflow loops, what it does next.

Output: :meth:`Verdict.to_json <hyperpod_ha.verdict.models.Verdict.to_json>`, with the
workflow's counters also :meth:`NextStep.to_json <hyperpod_ha.verdict.models.NextStep.to_json>`
(``next``, ``wait_seconds``, ``converged_by``, ``slurmctld_timeout``)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from hyperpod_ha.verdict.convergence import next_step
from hyperpod_ha.verdict.evaluation import evaluate
from hyperpod_ha.verdict.inputs import VerdictRequest
from hyperpod_ha.verdict.models import ConvergenceInputError
from hyperpod_ha.verdict.observation import configured_timeout
from hyperpod_ha.verdict.settings import VerdictPolicy


def decide(request: VerdictRequest, policy: VerdictPolicy, now: dt.datetime | None = None) -> dict[str, Any]:
    verdict = evaluate(
        request.reports, policy, attempt=request.attempt, config_strategy=request.config_strategy
    )
    result = verdict.to_json()
    # The rules judge the controllers' evidence only; what the trigger's source reported
    # (HyperPod's slurmdbd health) is told beside their reasons, never weighed by them.
    result["reasons"] = [*result["reasons"], *(r for r in request.reported if r not in result["reasons"])]
    counters = request.counters
    if counters is None:
        return result
    try:
        step = next_step(
            verdict.name.value,
            attempt=request.attempt or 1,
            max_attempts=counters.max_attempts,
            started_at=counters.started_at,
            trigger_at=counters.trigger_at,
            slurmctld_timeout=configured_timeout(request.reports),
            margin_seconds=counters.margin_seconds,
            deadline_seconds=counters.deadline_seconds,
            backoff_seconds=counters.backoff_seconds,
            now=now or dt.datetime.now(dt.UTC),
        )
    except ValueError as error:  # a NaN duration, say: still the workflow's bad input
        raise ConvergenceInputError(f"bad convergence input: {error}") from None
    return {**result, **step.to_json()}
