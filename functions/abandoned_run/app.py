"""AbandonedRunFunction: a verification run or drill stopped, timed out, or failed holding its
lease -> lease released, incident opened."""

from __future__ import annotations

from functools import cache
from typing import Any

import boto3
from aws_lambda_powertools.utilities.typing import LambdaContext

from hyperpod_ha.abandoned_runs import (
    AbandonedRunRejected,
    incident_reasons,
    is_drill,
    needs_release_check,
    parse_abandoned_run,
)
from hyperpod_ha.drill.adapters import lease_id_for_drill
from hyperpod_ha.incidents import Incidents, IncidentSettings, OpenRequest
from hyperpod_ha.observability import logger, tracer
from hyperpod_ha.settings import setting
from hyperpod_ha.verification_runs import RunSettings, VerificationRuns


@cache
def _runs() -> VerificationRuns:
    return VerificationRuns(
        boto3.client("dynamodb"),
        boto3.client("stepfunctions"),
        setting("STATE_TABLE"),
        setting("STATE_MACHINE_ARN"),
        RunSettings.from_environment(),
    )


@cache
def _incidents() -> Incidents:
    return Incidents(boto3.client("ssm"), boto3.client("sns"), IncidentSettings.from_environment())


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    try:
        run = parse_abandoned_run(event)
    except AbandonedRunRejected as error:
        # The rule only sends these; anything else is logged and dropped, never retried.
        event_id = event.get("id") if isinstance(event, dict) else None
        logger.warning("event ignored", extra={"event_id": str(event_id)[:256], "reason": str(error)})
        return {"outcome": "ignored", "reason": str(error)}
    drill = is_drill(run, setting("DRILL_STATE_MACHINE_ARN", ""))
    # A drill's lease id comes from its execution, not from its input.
    lease_id = lease_id_for_drill(run.execution_arn) if drill else run.lease_id
    released = _runs().release(run.cluster, lease_id) if lease_id else False
    if needs_release_check(run) and not released:
        # A verdict's FAILED: the run released its lease and opened its incident itself.
        logger.info("failed run cleaned up after itself", extra={"execution_arn": run.execution_arn})
        return {"outcome": "ignored", "reason": "the run released its lease itself"}
    kind, reasons = incident_reasons(run, drill=drill)
    opened = _incidents().open(
        OpenRequest(
            cluster=run.cluster, verdict="UNKNOWN", kind=kind, execution_id=run.execution_arn, reasons=reasons
        )
    )
    logger.warning(
        "abandoned run handled",
        extra={"execution_arn": run.execution_arn, "status": run.status, "lease_released": released},
    )
    return {"outcome": "handled", "lease_released": released, "ops_item_id": opened.ops_item_id}
