"""NodeEventFunction's service: one HyperPod EventBridge event triaged (a verification run, a
worker counted, a notice), or kept on the dead-letter queue when it is not one."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from hyperpod_ha.environment import Settings, Text
from hyperpod_ha.ingestion.cluster_event_records import ClusterEventRecords
from hyperpod_ha.ingestion.database_incidents import IncidentFunctionClient
from hyperpod_ha.ingestion.event_metadata_triage import EventMetadataTriage
from hyperpod_ha.ingestion.instance_groups import InstanceGroups
from hyperpod_ha.ingestion.node_event_triage import NodeEventTriage
from hyperpod_ha.ingestion.rejected_inputs import RejectedInputs
from hyperpod_ha.ingestion.topic_publisher import TopicPublisher
from hyperpod_ha.ingestion.worker_failures import MassFailurePolicy, WorkerFailures
from hyperpod_ha.observability import metrics
from hyperpod_ha.runs.models import VerificationRunsSettings
from hyperpod_ha.runs.verification_runs import VerificationRuns

# A cluster's failure notice is sent once per event; redeliveries come within a day.
NOTICE_TTL_SECONDS = 86400


@dataclass(frozen=True)
class NodeEventSettings(Settings):
    """NodeEventFunction's environment."""

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


class NodeEventService:
    def __init__(self, triage: NodeEventTriage, rejected: RejectedInputs) -> None:
        self._triage = triage
        self._rejected = rejected

    @classmethod
    def from_settings(cls, settings: NodeEventSettings) -> NodeEventService:
        import boto3

        dynamodb = boto3.client("dynamodb")
        sagemaker = boto3.client("sagemaker")
        table = settings.verification.state_table
        publisher = TopicPublisher(
            boto3.client("sns"), settings.topic_arn, dynamodb, table, NOTICE_TTL_SECONDS
        )
        triage = NodeEventTriage(
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
            ),
            account=settings.account,
            region=settings.region,
        )
        return cls(triage, RejectedInputs(boto3.client("sqs"), settings.rejected_queue_url))

    def handle(self, event: Mapping[str, Any]) -> dict[str, Any]:
        result = self._triage.handle(event, self._rejected)
        metrics.add_metric(
            name=f"NodeEvents{result['outcome'].replace('-', ' ').title().replace(' ', '')}",
            unit="Count",
            value=1,
        )
        return {"records": [result]}
