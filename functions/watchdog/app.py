"""WatchdogFunction: a scheduled check of every controller; a verification run only when not verified.

Input: the schedule's tick ``{"source": "hyperpod-ha.watchdog", "tick_id", "scheduled_time"}``.
Output: ``{"outcome": "verified"|"started"|"joined"|"duplicate", "verdict", "reasons",
"controllers", "execution_arn"}``. A bad tick, bad configuration or a failed check raises
(after an error log line and a metric): the invocation then lands in the dead-letter queue.

Environment: ``CLUSTER_NAME``, ``CONTROLLER_GROUP``, ``STATE_TABLE``, ``STATE_MACHINE_ARN``,
``COMMAND_TRANSPORT``, ``PROBE_DOCUMENT``, ``PROBE_DEADLINE_SECONDS``, and the run settings.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from hyperpod_ha.observability import logger, metrics, tracer
from hyperpod_ha.settings import ConfigurationError, positive_float_setting, setting

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.watchdog import Watchdog


def _deadline() -> float:
    return positive_float_setting("PROBE_DEADLINE_SECONDS", 20)


@cache
def _watchdog() -> Watchdog:
    import time

    import boto3

    from hyperpod_ha.cluster import discover_controllers
    from hyperpod_ha.commands import runner_for
    from hyperpod_ha.health import ControllerNode, ControllerReport, check_controller
    from hyperpod_ha.verification_runs import RunSettings, VerificationRuns
    from hyperpod_ha.watchdog import FoundFailures, Watchdog

    cluster, group = setting("CLUSTER_NAME"), setting("CONTROLLER_GROUP")
    runner = runner_for(setting("COMMAND_TRANSPORT", "session-manager"))
    document, deadline = setting("PROBE_DOCUMENT"), _deadline()
    dynamodb = boto3.client("dynamodb")
    runs = VerificationRuns(
        dynamodb,
        boto3.client("stepfunctions"),
        setting("STATE_TABLE"),
        setting("STATE_MACHINE_ARN"),
        RunSettings.from_environment(),
    )
    sagemaker = boto3.client("sagemaker")

    def check(node: ControllerNode) -> ControllerReport:
        return check_controller(node, runner, document=document, deadline_seconds=deadline)

    return Watchdog(
        cluster,
        lambda: discover_controllers(sagemaker, cluster, group),
        check,
        runs,
        FoundFailures(dynamodb, setting("STATE_TABLE")),
        time.time,
    )


def _failed(metric: str, message: str, error: Exception) -> None:
    """Never a silent no-op: an error line with the reason and a metric to alarm on."""
    logger.error(message, extra={"error_type": type(error).__name__, "reason": str(error)[:500]})
    metrics.add_metric(name=metric, unit="Count", value=1)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    from botocore.exceptions import ClientError

    from hyperpod_ha.cluster import ControllerGroupNotFound
    from hyperpod_ha.commands import InvalidCommandRequest
    from hyperpod_ha.watchdog import TickRejected, parse_tick

    try:
        tick = parse_tick(event)
    except TickRejected as error:
        _failed("WatchdogTicksRejected", "watchdog tick rejected", error)
        raise
    try:
        result = _watchdog().tick(tick)
    except (ConfigurationError, InvalidCommandRequest, ControllerGroupNotFound) as error:
        _failed("WatchdogConfigurationErrors", "watchdog configuration is wrong", error)
        raise
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        if code in ("ResourceNotFound", "ResourceNotFoundException", "ValidationException"):
            _failed("WatchdogConfigurationErrors", "watchdog configuration is wrong", error)
        else:
            _failed("WatchdogFailures", "watchdog check failed", error)
        raise
    except Exception as error:
        _failed("WatchdogFailures", "watchdog check failed", error)
        raise
    if result.outcome != "verified":
        metrics.add_metric(name="WatchdogNotVerified", unit="Count", value=1)
    logger.info("watchdog tick", extra={"tick_id": tick.id, **result.to_json()})
    return result.to_json()
