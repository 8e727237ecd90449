"""EvaluateVerdictFunction: the controllers' reports -> one verdict (pure; no AWS calls).

Input and output: :mod:`hyperpod_ha.verdict.inputs` and :mod:`hyperpod_ha.verdict.decision`.
Environment: ``EXPECTED_STATE_FSTYPES`` (:class:`hyperpod_ha.verdict.VerdictPolicy`); the early
warnings' ``OVERLOAD_*`` thresholds (:class:`hyperpod_ha.early_warning.settings.WarningThresholds`).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from hyperpod_ha.observability import observed

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.verdict.function import EvaluateVerdictFunction


@cache
def _function() -> EvaluateVerdictFunction:
    # On the first invocation, before its event: the feature's modules imported (INIT stays
    # small, see bench/cold_start.py), the settings read (a bad one fails every invocation,
    # naming it), the clients made.
    from hyperpod_ha.verdict.function import EvaluateVerdictFunction, EvaluateVerdictFunctionSettings

    return EvaluateVerdictFunction.from_settings(EvaluateVerdictFunctionSettings.from_environment())


@observed
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _function().handle(event, context)
