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

    from hyperpod_ha.watchdog.service import Watchdog


@cache
def _watchdog() -> Watchdog:
    from hyperpod_ha.watchdog.watchdog_function import WatchdogSettings, watchdog_from_settings

    return watchdog_from_settings(WatchdogSettings.from_environment())


@observed
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    from hyperpod_ha.watchdog.watchdog_function import handle_tick

    return handle_tick(_watchdog, event)
