"""NodeEventFunction: HyperPod EventBridge events -> verification runs, mass-failure and cluster notices."""

from __future__ import annotations

import time
from functools import cache
from typing import TYPE_CHECKING, Any

import boto3
from botocore.exceptions import ClientError

from hyperpod_ha.observability import logger, metrics, tracer
from hyperpod_ha.settings import int_setting, setting

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.ingestion import NodeEventTriage, RejectedInputs

# The triage's modules are imported on the first invocation, which needs them anyway: INIT
# stays close to a boto3-only function (see bench/cold_start.py).


@cache
def _group_of_instance(cluster: str, instance_id: str) -> str | None:
    """The instance group of a node (health events do not say); cached for the container's life."""
    try:
        node = _sagemaker().describe_cluster_node(ClusterName=cluster, NodeId=instance_id)
    except ClientError as error:
        if error.response["Error"]["Code"] in ("ResourceNotFound", "ValidationException"):
            return None
        raise
    group: str | None = node["NodeDetails"].get("InstanceGroupName")
    return group


@cache
def _sagemaker() -> Any:
    return boto3.client("sagemaker")


@cache
def _triage() -> tuple[NodeEventTriage, RejectedInputs]:
    from hyperpod_ha.ingestion import NodeEventTriage, Notices, RejectedInputs
    from hyperpod_ha.verification_runs import RunSettings, VerificationRuns
    from hyperpod_ha.worker_failures import MassFailurePolicy, WorkerFailures

    dynamodb = boto3.client("dynamodb")
    table = setting("STATE_TABLE")
    runs = VerificationRuns(
        dynamodb,
        boto3.client("stepfunctions"),
        table,
        setting("STATE_MACHINE_ARN"),
        RunSettings.from_environment(),
    )
    policy = MassFailurePolicy(
        threshold=int_setting("MASS_FAILURE_THRESHOLD", 5),
        window_seconds=60 * int_setting("MASS_FAILURE_WINDOW_MINUTES", 10),
    )
    notices = Notices(
        boto3.client("sns"), setting("NOTIFICATION_TOPIC_ARN"), dynamodb, table, ttl_seconds=86400
    )
    triage = NodeEventTriage(
        cluster=setting("CLUSTER_NAME"),
        controller_group=setting("CONTROLLER_GROUP"),
        runs=runs,
        workers=WorkerFailures(dynamodb, table, policy),
        notices=notices,
        group_of_instance=_group_of_instance,
        clock=time.time,
    )
    return triage, RejectedInputs(boto3.client("sqs"), setting("REJECTED_QUEUE_URL"))


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    triage, rejected = _triage()
    result = triage.handle(event, rejected)
    metrics.add_metric(
        name=f"NodeEvents{result['outcome'].replace('-', ' ').title().replace(' ', '')}",
        unit="Count",
        value=1,
    )
    return {"records": [result]}
