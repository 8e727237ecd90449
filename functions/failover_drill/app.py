"""FailoverDrillFunction: one step of the failover drill state machine (``action`` picks it).

See ``hyperpod_ha.drill.steps``. ``DrillCommandFailed`` and ``InvalidDrillRequest`` propagate
for the state machine's Catch, which writes the drill report with the error.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

import boto3

from hyperpod_ha.observability import logger, metrics, tracer
from hyperpod_ha.settings import int_setting, setting

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.drill.steps import DrillContext

# The drill's modules are imported on the first invocation, which needs them anyway: INIT
# stays close to a boto3-only function (see bench/cold_start.py).


@cache
def _context() -> DrillContext:
    from hyperpod_ha.commands import runner_for
    from hyperpod_ha.drill.adapters import DrillLease, DrillRecords, NodeCommands
    from hyperpod_ha.drill.steps import DrillContext
    from hyperpod_ha.incidents import Incidents, IncidentSettings
    from hyperpod_ha.status_records import StatusRecords

    dynamodb = boto3.client("dynamodb")
    table = setting("STATE_TABLE")
    transport = setting("COMMAND_TRANSPORT", "session-manager")
    return DrillContext(
        lease=DrillLease(dynamodb, table, int_setting("LEASE_SECONDS", 3600)),
        commands=cache(
            lambda: NodeCommands(
                runner_for(transport),
                setting("TAKEOVER_DOCUMENT"),
                setting("JOBS_DOCUMENT"),
                float(int_setting("DRILL_COMMAND_DEADLINE_SECONDS", 60)),
            )
        ),
        records=DrillRecords(
            boto3.client("ssm"), boto3.client("sns"), setting("NOTIFICATION_TOPIC_ARN", "").strip() or None
        ),
        status=StatusRecords(dynamodb, table),
        incidents=cache(
            lambda: Incidents(boto3.client("ssm"), boto3.client("sns"), IncidentSettings.from_environment())
        ),
        transport=transport,
        metric=lambda name, unit, value: metrics.add_metric(name=name, unit=unit, value=value),
    )


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    from hyperpod_ha.drill.adapters import DrillCommandFailed
    from hyperpod_ha.drill.models import InvalidDrillRequest
    from hyperpod_ha.drill.steps import run_step

    logger.append_keys(action=event.get("action") if isinstance(event, dict) else None)
    try:
        result = run_step(event, _context())
    except (InvalidDrillRequest, DrillCommandFailed) as error:
        # Raised on for the state machine's Catch, which writes the report with it.
        logger.warning("drill step failed", extra={"error_type": type(error).__name__, "reason": str(error)})
        raise
    if event.get("action") == "finish":
        metrics.flush_metrics()  # only the report counts; the other steps emit nothing
    logger.info("drill step done", extra={"outcome": result.get("outcome"), "next": result.get("next")})
    return result
