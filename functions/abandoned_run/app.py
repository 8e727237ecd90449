"""AbandonedRunFunction: a verification run or drill stopped, timed out, or failed holding its
lease -> lease released, incident opened."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from hyperpod_ha.observability import observed

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.runs.function import AbandonedRunFunction


@cache
def _function() -> AbandonedRunFunction:
    # On the first invocation, before its event: the feature's modules imported (INIT stays
    # small, see bench/cold_start.py), the settings read (a bad one fails every invocation,
    # naming it), the clients made.
    from hyperpod_ha.runs.function import AbandonedRunFunction, AbandonedRunFunctionSettings

    return AbandonedRunFunction.from_settings(AbandonedRunFunctionSettings.from_environment())


@observed
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _function().handle(event, context)
