"""FailoverDrillFunction's wiring (its adapters, made from its settings) and one step, logged.

``InvalidDrillRequest`` and ``DrillCommandFailed`` propagate for the state machine's Catch,
which writes the drill report with the error.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import boto3

from hyperpod_ha.commands import runner_for
from hyperpod_ha.drill.adapters import DrillCommandFailed, DrillLease, DrillRecords, NodeCommands
from hyperpod_ha.drill.models import InvalidDrillRequest
from hyperpod_ha.drill.settings import DrillSettings
from hyperpod_ha.drill.steps import DrillContext, run_step
from hyperpod_ha.incidents import Incidents
from hyperpod_ha.observability import logger, metrics
from hyperpod_ha.status_records import StatusRecords


def drill_context(settings: DrillSettings) -> DrillContext:
    dynamodb, ssm, sns = boto3.client("dynamodb"), boto3.client("ssm"), boto3.client("sns")
    return DrillContext(
        lease=DrillLease(dynamodb, settings.state_table, settings.lease_seconds),
        # Most steps run no command: the transport is made on first use.
        commands=cache(
            lambda: NodeCommands(
                runner_for(settings.command_transport),
                settings.takeover_document,
                settings.jobs_document,
                settings.accounting_document,
                settings.command_deadline_seconds,
            )
        ),
        records=DrillRecords(ssm, sns, settings.incidents.topic_arn),
        status=StatusRecords(dynamodb, settings.state_table),
        incidents=cache(lambda: Incidents(ssm, sns, settings.incidents)),
        transport=settings.command_transport,
        metric=lambda name, unit, value: metrics.add_metric(name=name, unit=unit, value=value),
    )


def run_logged_step(event: Any, context: DrillContext) -> dict[str, Any]:
    action = event.get("action") if isinstance(event, Mapping) else None
    logger.append_keys(action=action)
    try:
        result = run_step(event, context)
    except (InvalidDrillRequest, DrillCommandFailed) as error:
        logger.warning("drill step failed", extra={"error_type": type(error).__name__, "reason": str(error)})
        raise
    if action == "finish":
        metrics.flush_metrics()  # only the report counts; the other steps emit nothing
    logger.info("drill step done", extra={"outcome": result.get("outcome"), "next": result.get("next")})
    return result
