"""DiscoverControllersFunction: the cluster's controllers, as the workflow's Map wants them.

Input: ``{"cluster": ...}`` (optional: the stack's own cluster). Output: ``ClusterControllers``
as JSON. Environment: ``CLUSTER_NAME``, ``CONTROLLER_GROUP``.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from hyperpod_ha.controllers.discovery import discover_controllers
from hyperpod_ha.controllers.naming import requested_cluster
from hyperpod_ha.controllers.settings import DiscoverySettings
from hyperpod_ha.observability import logger, observed

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext
    from mypy_boto3_sagemaker import SageMakerClient


@cache
def _wiring() -> tuple[DiscoverySettings, SageMakerClient]:
    """Once per container, on the first invocation: the settings, then the client."""
    settings = DiscoverySettings.from_environment()
    import boto3

    return settings, boto3.client("sagemaker")


@observed
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    settings, sagemaker = _wiring()
    cluster = requested_cluster(event, settings.cluster)
    found = discover_controllers(sagemaker, cluster, settings.controller_group)
    logger.info(
        "controllers found",
        extra={"cluster": cluster, "controllers": [(c.instance_id, c.status) for c in found.controllers]},
    )
    return found.to_json()
