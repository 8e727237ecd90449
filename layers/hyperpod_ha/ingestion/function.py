"""The two trigger functions of the ingestion, each its settings and its entry class:

- ControllerStatusFunction: each SNS record of the failover topic checked and parsed (HyperPod's
  ON/OFF notification or Slurm's trigger, ``failover_topic``), then the cluster's verification
  run started or joined (and for a full accounting buffer the accounting incident opened), once
  per SNS MessageId (SNS delivers at least once: each answer is recorded once,
  ``notification_records``, and a redelivery answered from it).
- HyperPodEventFunction: one HyperPod EventBridge event triaged (a verification run, a worker
  counted, a notice), or kept on the dead-letter queue when it is not one.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from hyperpod_ha.environment import OptionalText, Settings, Text
from hyperpod_ha.errors import InputRejected
from hyperpod_ha.ingestion.cluster_event_records import ClusterEventRecords
from hyperpod_ha.ingestion.controller_notifications import controller_notification_record
from hyperpod_ha.ingestion.database_incidents import IncidentFunctionClient
from hyperpod_ha.ingestion.event_metadata_triage import EventMetadataTriage
from hyperpod_ha.ingestion.failover_topic import parse_failover_topic_message
from hyperpod_ha.ingestion.hyperpod_event_triage import HyperPodEventTriage
from hyperpod_ha.ingestion.instance_groups import InstanceGroups
from hyperpod_ha.ingestion.rejected_inputs import RejectedInputs
from hyperpod_ha.ingestion.settings import MassFailurePolicy
from hyperpod_ha.ingestion.slurm_trigger_records import OpenIncident, slurm_trigger_record
from hyperpod_ha.ingestion.sns_records import check_sns_record, sns_records
from hyperpod_ha.ingestion.worker_failures import WorkerFailures
from hyperpod_ha.notifications import ControllerNotification, NotificationRejected
from hyperpod_ha.observability import metrics
from hyperpod_ha.runs.settings import VerificationRunsSettings
from hyperpod_ha.runs.verification_runs import RunRequestRejected, VerificationRuns
from hyperpod_ha.topic_messages.publisher import TopicPublisher

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.idempotency.persistence.base import BasePersistenceLayer
    from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.slurm.triggers import TriggerMessage

# A cluster's failure notice is sent once per event; redeliveries come within a day.
NOTICE_TTL_SECONDS = 86400


@dataclass(frozen=True)
class ControllerStatusFunctionSettings(Settings):
    """ControllerStatusFunction's environment."""

    cluster: Annotated[str, Text("CLUSTER_NAME")]
    # The SlurmFailoverTopicArn the stack subscribes to: a record from any other topic is refused.
    topic_arn: Annotated[str, Text("SLURM_FAILOVER_TOPIC_ARN")]
    idempotency_table: Annotated[str, Text("IDEMPOTENCY_TABLE")]
    rejected_queue_url: Annotated[str, Text("REJECTED_QUEUE_URL")]
    # A Slurm trigger's full accounting buffer opens the accounting incident through it.
    incident_function_arn: Annotated[str, Text("INCIDENT_FUNCTION_ARN")]
    verification: VerificationRunsSettings


def _replayed(response: Any, idempotent_data: DataRecord) -> Any:
    """Powertools calls this when it answers from the idempotency store: a redelivery."""
    return {**response, "outcome": "duplicate"}


class ControllerStatusFunction:
    def __init__(
        self,
        runs: VerificationRuns,
        cluster: str,
        rejected: RejectedInputs,
        persistence_store: BasePersistenceLayer,
        topic_arn: str,
        open_incident: OpenIncident,
    ) -> None:
        from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent_function

        self._rejected = rejected
        self._topic_arn = topic_arn

        def handle(
            record: Mapping[str, Any], notification: ControllerNotification | TriggerMessage
        ) -> dict[str, Any]:
            sns = record["Sns"]
            if isinstance(notification, ControllerNotification):
                return controller_notification_record(
                    runs, cluster, sns["MessageId"], notification, sns.get("Timestamp", "")
                )
            return slurm_trigger_record(runs, cluster, sns["MessageId"], notification, open_incident)

        self._config = IdempotencyConfig(
            event_key_jmespath="Sns.MessageId", raise_on_no_idempotency_key=True, response_hook=_replayed
        )
        self._handle_once = idempotent_function(
            handle, data_keyword_argument="record", persistence_store=persistence_store, config=self._config
        )

    @classmethod
    def from_settings(cls, settings: ControllerStatusFunctionSettings) -> ControllerStatusFunction:
        import boto3

        from hyperpod_ha.ingestion.notification_records import AnswerRecords

        return cls(
            VerificationRuns.from_settings(settings.verification),
            settings.cluster,
            RejectedInputs(boto3.client("sqs"), settings.rejected_queue_url),
            AnswerRecords(table_name=settings.idempotency_table),
            settings.topic_arn,
            IncidentFunctionClient(boto3.client("lambda"), settings.incident_function_arn).open,
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
            notification = parse_failover_topic_message(sns.get("Subject"), sns.get("Message"))
        except InputRejected as error:  # NotificationRejected or TriggerMessageRejected
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


@dataclass(frozen=True)
class HyperPodEventFunctionSettings(Settings):
    """HyperPodEventFunction's environment."""

    cluster: Annotated[str, Text("CLUSTER_NAME")]
    controller_group: Annotated[str, Text("CONTROLLER_GROUP")]
    rejected_queue_url: Annotated[str, Text("REJECTED_QUEUE_URL")]
    topic_arn: Annotated[str, Text("NOTIFICATION_TOPIC_ARN")]
    # Opens the incident of an accounting database change HyperPod could not revert.
    incident_function_arn: Annotated[str, Text("INCIDENT_FUNCTION_ARN")]

    # The stack's own account (the template's AWS::AccountId) and region (Lambda sets AWS_REGION).
    # A variable, not the context's invoked_function_arn: read once with the other settings and
    # named in the template; not AWS_ACCOUNT_ID, which botocore reads for its endpoints.
    account: Annotated[str, Text("STACK_ACCOUNT_ID")]
    region: Annotated[str, Text("AWS_REGION", Text("AWS_DEFAULT_REGION"))]
    mass_failure: MassFailurePolicy
    verification: VerificationRunsSettings
    # The template's AWS::StackName (Globals): the commands a notice prints name it.
    stack_name: Annotated[str | None, OptionalText("STACK_NAME")] = None


@dataclass(frozen=True)
class HyperPodEventFunction:
    triage: HyperPodEventTriage
    rejected: RejectedInputs

    @classmethod
    def from_settings(cls, settings: HyperPodEventFunctionSettings) -> HyperPodEventFunction:
        import boto3

        dynamodb = boto3.client("dynamodb")
        sagemaker = boto3.client("sagemaker")
        table = settings.verification.state_table
        publisher = TopicPublisher(
            boto3.client("sns"), settings.topic_arn, dynamodb, table, NOTICE_TTL_SECONDS
        )
        triage = HyperPodEventTriage(
            cluster=settings.cluster,
            controller_group=settings.controller_group,
            runs=VerificationRuns.from_settings(settings.verification, dynamodb),
            workers=WorkerFailures(dynamodb, table, settings.mass_failure),
            publisher=publisher,
            group_of_instance=InstanceGroups(sagemaker).group_of,
            clock=time.time,
            metadata=EventMetadataTriage(
                publisher=publisher,
                read_again=ClusterEventRecords(sagemaker).metadata,
                open_incident=IncidentFunctionClient(
                    boto3.client("lambda"), settings.incident_function_arn
                ).open,
                clock=time.time,
                region=settings.region,
                stack_name=settings.stack_name,
            ),
            account=settings.account,
            region=settings.region,
            stack_name=settings.stack_name,
        )
        return cls(triage, RejectedInputs(boto3.client("sqs"), settings.rejected_queue_url))

    def handle(self, event: Mapping[str, Any], context: LambdaContext) -> dict[str, Any]:
        result = self.triage.handle(event, self.rejected)
        metrics.add_metric(
            name=f"HyperPodEvents{result['outcome'].replace('-', ' ').title().replace(' ', '')}",
            unit="Count",
            value=1,
        )
        return {"records": [result]}
