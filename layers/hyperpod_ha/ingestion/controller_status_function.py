"""ControllerStatusFunction's service: each SNS record checked and parsed, then the cluster's
verification run started or joined, once per SNS MessageId (SNS delivers at least once)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from hyperpod_ha.environment import Settings, Text
from hyperpod_ha.ingestion.controller_messages import (
    ControllerNotification,
    NotificationRejected,
    check_sns_record,
    parse_controller_notification,
    sns_records,
)
from hyperpod_ha.ingestion.rejected_inputs import RejectedInputs
from hyperpod_ha.observability import logger, metrics
from hyperpod_ha.runs.models import Trigger, VerificationRunsSettings
from hyperpod_ha.runs.verification_runs import RunRequestRejected, VerificationRuns
from hyperpod_ha.verdict import trigger_time

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.idempotency.persistence.base import BasePersistenceLayer
    from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord
    from aws_lambda_powertools.utilities.typing import LambdaContext


@dataclass(frozen=True)
class ControllerStatusSettings(Settings):
    """ControllerStatusFunction's environment."""

    cluster: Annotated[str, Text("CLUSTER_NAME")]
    # The SlurmFailoverTopicArn the stack subscribes to: a record from any other topic is refused.
    topic_arn: Annotated[str, Text("SLURM_FAILOVER_TOPIC_ARN")]
    idempotency_table: Annotated[str, Text("IDEMPOTENCY_TABLE")]
    rejected_queue_url: Annotated[str, Text("REJECTED_QUEUE_URL")]
    verification: VerificationRunsSettings


def controller_notification_record(
    runs: VerificationRuns,
    cluster: str,
    message_id: str,
    notification: ControllerNotification,
    timestamp: str,
) -> dict[str, Any]:
    trigger = Trigger(
        source="sns",
        id=message_id,
        summary={
            "status": notification.status,
            "address": notification.address,
            "role": notification.role,
            "timestamp": timestamp,
        },
        time=trigger_time(timestamp),
    )
    reason = f"slurmctld {notification.status} on {notification.address} ({notification.role} script)"
    decision = runs.start_or_join(cluster, trigger, reason)
    logger.info(
        "controller notification handled",
        extra={
            "message_id": message_id,
            "outcome": decision.outcome,
            "execution_arn": decision.execution_arn,
        },
    )
    return {
        "message_id": message_id,
        "outcome": decision.outcome,
        "status": notification.status,
        "address": notification.address,
        "role": notification.role,
        "execution_arn": decision.execution_arn,
    }


def _replayed(response: Any, idempotent_data: DataRecord) -> Any:
    """Powertools calls this when it answers from the idempotency store: a redelivery."""
    return {**response, "outcome": "duplicate"}


class ControllerStatusService:
    def __init__(
        self,
        runs: VerificationRuns,
        cluster: str,
        rejected: RejectedInputs,
        persistence_store: BasePersistenceLayer,
        topic_arn: str,
    ) -> None:
        from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent_function

        self._rejected = rejected
        self._topic_arn = topic_arn

        def handle(record: Mapping[str, Any], notification: ControllerNotification) -> dict[str, Any]:
            sns = record["Sns"]
            return controller_notification_record(
                runs, cluster, sns["MessageId"], notification, sns.get("Timestamp", "")
            )

        self._config = IdempotencyConfig(
            event_key_jmespath="Sns.MessageId", raise_on_no_idempotency_key=True, response_hook=_replayed
        )
        self._handle_once = idempotent_function(
            handle, data_keyword_argument="record", persistence_store=persistence_store, config=self._config
        )

    @classmethod
    def from_settings(cls, settings: ControllerStatusSettings) -> ControllerStatusService:
        import boto3
        from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

        return cls(
            VerificationRuns.from_settings(settings.verification),
            settings.cluster,
            RejectedInputs(boto3.client("sqs"), settings.rejected_queue_url),
            DynamoDBPersistenceLayer(table_name=settings.idempotency_table),
            settings.topic_arn,
        )

    def handle(self, event: object, context: LambdaContext) -> dict[str, Any]:
        self._config.register_lambda_context(context)
        try:
            records = sns_records(event)
        except NotificationRejected as error:
            return {"records": [self._reject(event, "", str(error))]}
        return {"records": [self._record(record) for record in records]}

    def _record(self, raw: object) -> dict[str, Any]:
        try:
            sns = check_sns_record(raw, self._topic_arn)
        except NotificationRejected as error:
            return self._reject(raw, "", str(error))
        message_id = str(sns["MessageId"])
        try:
            notification = parse_controller_notification(sns.get("Subject"), sns.get("Message"))
        except NotificationRejected as error:
            return self._reject(raw, message_id, str(error))
        try:
            result: dict[str, Any] = self._handle_once(record=raw, notification=notification)
        except RunRequestRejected as error:  # a trigger over its bounds: kept, nothing started
            return self._reject(raw, message_id, str(error))
        metrics.add_metric(name=f"Notifications{result['outcome'].capitalize()}", unit="Count", value=1)
        return result

    def _reject(self, raw: object, message_id: str, reason: str) -> dict[str, Any]:
        self._rejected.keep("sns", message_id, reason, raw)
        metrics.add_metric(name="NotificationsRejected", unit="Count", value=1)
        return {"message_id": message_id[:256], "outcome": "rejected", "reason": reason}
