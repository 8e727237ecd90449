"""WatchdogFunction: a scheduled check of every controller; a verification run only when not verified.

Input: the schedule's tick ``{"source": "hyperpod-ha.watchdog", "tick_id", "scheduled_time"}``.
Output: ``{"outcome": "verified"|"started"|"joined"|"duplicate", "verdict", "reasons",
"controllers", "execution_arn"}``. A bad tick, bad configuration or a failed check raises
(after an error log line and a metric): the invocation then lands in the dead-letter queue.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from hyperpod_ha.observability import metrics, observed

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.watchdog.function import WatchdogFunction


@cache
def _function() -> WatchdogFunction:
    # On the first invocation, before its event: the feature's modules imported (INIT stays
    # small, see bench/cold_start.py), the settings read (a bad one fails every invocation,
    # naming it), the clients made.
    from hyperpod_ha.watchdog.function import WatchdogFunction, WatchdogFunctionSettings

    return WatchdogFunction.from_settings(WatchdogFunctionSettings.from_environment())


@observed
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _function().handle(event, context)
