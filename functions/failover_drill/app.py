"""FailoverDrillFunction: one step of the failover drill state machine (``action`` picks it).

See ``hyperpod_ha.drill.steps``. ``DrillCommandFailed`` and ``InvalidDrillRequest`` propagate
for the state machine's Catch, which writes the drill report with the error.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from hyperpod_ha.observability import observed

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.drill.function import FailoverDrillFunction


@cache
def _function() -> FailoverDrillFunction:
    # On the first invocation, before its event: the feature's modules imported (INIT stays
    # small, see bench/cold_start.py), the settings read (a bad one fails every invocation,
    # naming it), the clients made.
    from hyperpod_ha.drill.function import FailoverDrillFunction, FailoverDrillFunctionSettings

    return FailoverDrillFunction.from_settings(FailoverDrillFunctionSettings.from_environment())


@observed
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _function().handle(event, context)
