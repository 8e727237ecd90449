"""AbandonedRunFunction: a verification run stopped or timed out -> lease released, incident opened."""

from __future__ import annotations

from functools import cache
from typing import Any

import boto3
from aws_lambda_powertools.utilities.typing import LambdaContext

from hyperpod_ha.abandoned_runs import AbandonedRun, AbandonedRunRejected, parse_abandoned_run
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


def _is_drill(run: AbandonedRun) -> bool:
    drills = setting("DRILL_STATE_MACHINE_ARN", "").strip()
    return bool(drills) and run.execution_arn.startswith(
        drills.replace(":stateMachine:", ":execution:") + ":"
    )


def _run_request(run: AbandonedRun) -> OpenRequest:
    return OpenRequest(
        cluster=run.cluster,
        verdict="UNKNOWN",
        kind="verification-error",
        execution_id=run.execution_arn,
        reasons=(
            f"the verification run was {run.status} before it finished: nothing was verified",
            f"it had started for: {run.reason or 'no reason given'}",
        ),
    )


def _drill_request(run: AbandonedRun) -> OpenRequest:
    return OpenRequest(
        cluster=run.cluster,
        verdict="UNKNOWN",
        kind="drill-not-verified",
        execution_id=run.execution_arn,
        reasons=(
            f"the failover drill was {run.status} before it finished: the cluster may be left failed over",
            "run `hyperpod-ha runbook start` to verify it, and hand control back if needed",
        ),
    )


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    try:
        run = parse_abandoned_run(event)
    except AbandonedRunRejected as error:
        # The rule only sends these; anything else is logged and dropped, never retried.
        logger.warning("event ignored", extra={"event_id": event.get("id"), "reason": str(error)})
        return {"outcome": "ignored", "reason": str(error)}
    drill = _is_drill(run)
    # A drill's lease id comes from its execution, not from its input.
    lease_id = lease_id_for_drill(run.execution_arn) if drill else run.lease_id
    released = _runs().release(run.cluster, lease_id) if lease_id else False
    opened = _incidents().open(_drill_request(run) if drill else _run_request(run))
    logger.warning(
        "abandoned verification run handled",
        extra={"execution_arn": run.execution_arn, "status": run.status, "lease_released": released},
    )
    return {"outcome": "handled", "lease_released": released, "ops_item_id": opened.ops_item_id}
