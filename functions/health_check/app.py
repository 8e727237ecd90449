"""HealthCheckFunction: run the probe on one controller through SSM and return its report.

Input: one controller as discovery produces it (extra keys are ignored); only this stack's
controllers are probed (``hyperpod_ha.controllers.targets``). Output: its report, bounded in
size; an unreachable controller is a report, SSM throttling raises ``ControllerCheckThrottled``
for the state machine's Retry.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from hyperpod_ha.observability import observed

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.controllers.function import HealthCheckFunction


@cache
def _function() -> HealthCheckFunction:
    # On the first invocation, before its event: the feature's modules imported (INIT stays
    # small, see bench/cold_start.py), the settings read (a bad one fails every invocation,
    # naming it), the clients made.
    from hyperpod_ha.controllers.function import HealthCheckFunction, HealthCheckFunctionSettings

    return HealthCheckFunction.from_settings(HealthCheckFunctionSettings.from_environment())


@observed
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _function().handle(event, context)
