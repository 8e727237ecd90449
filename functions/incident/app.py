"""IncidentFunction: open an incident (OpsCenter, Incident Manager, notification) or resolve them.

``{"action": "open" | "resolve", ...}``; see ``hyperpod_ha.incidents``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

import boto3

from hyperpod_ha.incidents import (
    Incidents,
    IncidentSettings,
    InvalidIncidentRequest,
    OpenRequest,
    ResolveRequest,
)
from hyperpod_ha.observability import logger, metrics, tracer
from hyperpod_ha.settings import setting
from hyperpod_ha.status_records import StatusRecords, from_environment, verdict_metric

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig
    from aws_lambda_powertools.utilities.typing import LambdaContext
    from mypy_boto3_sns import SNSClient
    from mypy_boto3_ssm import SSMClient
    from mypy_boto3_ssm_incidents import SSMIncidentsClient


@cache
def _ssm() -> SSMClient:
    return boto3.client("ssm")


@cache
def _sns() -> SNSClient:
    return boto3.client("sns")


@cache
def _incident_manager() -> SSMIncidentsClient:
    return boto3.client("ssm-incidents")


@cache
def _incidents() -> Incidents:
    settings = IncidentSettings.from_environment()
    return Incidents(
        _ssm(),
        _sns(),
        settings,
        incident_manager=_incident_manager() if settings.response_plan_arn else None,
    )


@cache
def _idempotency() -> IdempotencyConfig:
    # Imported on first use (resolve only): the idempotency utility is a large import.
    from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig

    return IdempotencyConfig(event_key_jmespath="[cluster, execution_id]", raise_on_no_idempotency_key=True)


@cache
def _announce_verified() -> Callable[[ResolveRequest], bool]:
    """The "verified" message, once per execution: nothing in OpsCenter records it."""
    from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer, idempotent_function

    incidents = _incidents()
    table = setting("IDEMPOTENCY_TABLE", "").strip()
    if not table:
        logger.warning("IDEMPOTENCY_TABLE not set: a retried resolve may repeat the 'verified' message")
        return incidents.announce_verified

    def announce(request: dict[str, Any]) -> dict[str, bool]:
        resolve = ResolveRequest(
            request["cluster"], request["verdict"], request["execution_id"], snapshot=request.get("snapshot")
        )
        return {"notified": incidents.announce_verified(resolve)}

    once = idempotent_function(
        announce,
        data_keyword_argument="request",
        persistence_store=DynamoDBPersistenceLayer(table_name=table),
        config=_idempotency(),
        key_prefix="hyperpod-ha.incident.verified",
    )

    def announce_once(request: ResolveRequest) -> bool:
        data = {
            "cluster": request.cluster,
            "verdict": request.verdict,
            "execution_id": request.execution_id,
            "snapshot": dict(request.snapshot) if request.snapshot else None,
        }
        return bool(once(request=data)["notified"])

    return announce_once


@cache
def _status() -> StatusRecords | None:
    return from_environment()


def _record_verdict(event: dict[str, Any]) -> None:
    """The run's verdict: kept for `hyperpod-ha status` and counted for the dashboard."""
    verdict = event.get("verdict")
    name = verdict_metric(verdict) if isinstance(verdict, str) else None
    if name is None:
        return
    metrics.add_metric(name=name, unit="Count", value=1)
    records = _status()
    if records is not None:
        given = event.get("reasons")
        reasons = [str(reason) for reason in given] if isinstance(given, list) else []
        records.put(
            str(event["cluster"]),
            "verdict",
            {"verdict": verdict, "reasons": reasons[:12], "execution_id": event.get("execution_id")},
        )


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    try:
        return _handle(event, context)
    finally:
        if metrics.metric_set:  # a failed step emits nothing: no empty-metrics warning
            metrics.flush_metrics()


def _handle(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if not isinstance(event, dict):
        raise InvalidIncidentRequest("the request is not a JSON object")
    action = event.get("action")
    logger.append_keys(action=action)
    if action == "open":
        opened = _incidents().open(OpenRequest.from_event(event))
        if opened.created:
            metrics.add_metric(name="IncidentsOpened", unit="Count", value=1)
        _record_verdict(event)
        return opened.to_json()
    if action == "resolve":
        # Lets Powertools expire an in-progress record when this invocation times out.
        _idempotency().register_lambda_context(context)
        resolved = _incidents().resolve(ResolveRequest.from_event(event), _announce_verified())
        if resolved.resolved:
            metrics.add_metric(name="IncidentsResolved", unit="Count", value=len(resolved.resolved))
        _record_verdict(event)
        return resolved.to_json()
    raise InvalidIncidentRequest("action must be open or resolve")
