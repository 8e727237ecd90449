"""DiscoverControllersFunction: the cluster's controllers, as the workflow's Map wants them."""

from __future__ import annotations

from functools import cache
from typing import Any

import boto3
from aws_lambda_powertools.utilities.typing import LambdaContext

from hyperpod_ha.cluster import discover_controllers, requested_cluster
from hyperpod_ha.observability import logger, tracer
from hyperpod_ha.settings import setting


@cache
def _sagemaker() -> Any:
    return boto3.client("sagemaker")


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    cluster = requested_cluster(event, setting("CLUSTER_NAME"))
    found = discover_controllers(_sagemaker(), cluster, setting("CONTROLLER_GROUP"))
    logger.info(
        "controllers found",
        extra={"cluster": cluster, "controllers": [(c.instance_id, c.status) for c in found.controllers]},
    )
    return found.to_json()
