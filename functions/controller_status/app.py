"""ControllerStatusFunction: SNS "Slurm Controller Status Change" -> start or join a verification."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

import boto3

from hyperpod_ha.observability import logger, metrics, tracer
from hyperpod_ha.settings import setting

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.ingestion import RejectedInputs
    from hyperpod_ha.notifications import ControllerNotification

# The modules below the observability set-up are imported on the first invocation, which
# needs them anyway: INIT stays close to a boto3-only function (see bench/cold_start.py).


@cache
def _rejected() -> RejectedInputs:
    from hyperpod_ha.ingestion import RejectedInputs

    return RejectedInputs(boto3.client("sqs"), setting("REJECTED_QUEUE_URL"))


@cache
def _handle_once() -> tuple[Callable[..., dict[str, Any]], Any]:
    # Powertools Idempotency keyed on the SNS MessageId: SNS delivers at least once.
    from aws_lambda_powertools.utilities.idempotency import (
        DynamoDBPersistenceLayer,
        IdempotencyConfig,
        idempotent_function,
    )

    from hyperpod_ha.ingestion import controller_notification_record
    from hyperpod_ha.verification_runs import RunSettings, VerificationRuns

    runs = VerificationRuns(
        boto3.client("dynamodb"),
        boto3.client("stepfunctions"),
        setting("STATE_TABLE"),
        setting("STATE_MACHINE_ARN"),
        RunSettings.from_environment(),
    )
    cluster = setting("CLUSTER_NAME")

    def handle(record: dict[str, Any], notification: ControllerNotification) -> dict[str, Any]:
        sns = record["Sns"]
        return controller_notification_record(
            runs, cluster, sns["MessageId"], notification, sns.get("Timestamp", "")
        )

    config = IdempotencyConfig(
        event_key_jmespath="Sns.MessageId",
        raise_on_no_idempotency_key=True,
        response_hook=_replayed,
    )
    idempotent = idempotent_function(
        handle,
        data_keyword_argument="record",
        persistence_store=DynamoDBPersistenceLayer(table_name=setting("IDEMPOTENCY_TABLE")),
        config=config,
    )
    return idempotent, config


def _replayed(response: Any, idempotent_data: DataRecord) -> Any:
    """Powertools calls this when it answers from the idempotency store: a redelivery."""
    return {**response, "outcome": "duplicate"}


def _record(raw: object) -> dict[str, Any]:
    from hyperpod_ha.notifications import (
        NotificationRejected,
        check_sns_record,
        parse_controller_notification,
    )

    try:
        sns = check_sns_record(raw)
    except NotificationRejected as error:
        return _reject(raw, "", str(error))
    message_id = str(sns["MessageId"])
    try:
        notification = parse_controller_notification(sns.get("Subject"), sns.get("Message"))
    except NotificationRejected as error:
        return _reject(raw, message_id, str(error))
    handle, _ = _handle_once()
    result: dict[str, Any] = handle(record=raw, notification=notification)
    metrics.add_metric(name=f"Notifications{result['outcome'].capitalize()}", unit="Count", value=1)
    return result


def _reject(raw: object, message_id: str, reason: str) -> dict[str, Any]:
    _rejected().keep("sns", message_id, reason, raw)
    metrics.add_metric(name="NotificationsRejected", unit="Count", value=1)
    return {"message_id": message_id[:256], "outcome": "rejected", "reason": reason}


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    from hyperpod_ha.notifications import NotificationRejected, sns_records

    _, config = _handle_once()
    config.register_lambda_context(context)
    try:
        records = sns_records(event)
    except NotificationRejected as error:
        return {"records": [_reject(event, "", str(error))]}
    return {"records": [_record(record) for record in records]}
