"""The controllers' two functions, each its settings and its entry class:

- DiscoverControllersFunction: the cluster's controllers, as the workflow's Map wants them.
- HealthCheckFunction: the probe run on one of this stack's controllers, its report returned.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from hyperpod_ha.commands import CommandRunner, runner_for
from hyperpod_ha.controllers.check import check_controller
from hyperpod_ha.controllers.discovery import discover_controllers
from hyperpod_ha.controllers.models import Controller
from hyperpod_ha.controllers.naming import requested_cluster
from hyperpod_ha.controllers.settings import ClusterName, ProbeSettings
from hyperpod_ha.controllers.targets import OwnControllers
from hyperpod_ha.environment import Settings, Text
from hyperpod_ha.observability import logger

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext
    from mypy_boto3_sagemaker import SageMakerClient


@dataclass(frozen=True)
class DiscoverControllersFunctionSettings(Settings):
    """DiscoverControllersFunction's: the cluster this stack watches and its controllers' group."""

    cluster: Annotated[str, ClusterName("CLUSTER_NAME")]
    controller_group: Annotated[str, Text("CONTROLLER_GROUP")]


@dataclass(frozen=True)
class DiscoverControllersFunction:
    sagemaker: SageMakerClient
    settings: DiscoverControllersFunctionSettings

    @classmethod
    def from_settings(cls, settings: DiscoverControllersFunctionSettings) -> DiscoverControllersFunction:
        import boto3

        return cls(boto3.client("sagemaker"), settings)

    def handle(self, event: object, context: LambdaContext) -> dict[str, Any]:
        cluster = requested_cluster(event, self.settings.cluster)
        found = discover_controllers(self.sagemaker, cluster, self.settings.controller_group)
        logger.info(
            "controllers found",
            extra={"cluster": cluster, "controllers": [(c.instance_id, c.status) for c in found.controllers]},
        )
        return found.to_json()


@dataclass(frozen=True)
class HealthCheckFunctionSettings(Settings):
    """HealthCheckFunction's: how the probe runs, and whose controllers it may probe."""

    probe: ProbeSettings
    # The stack's cluster and controller group (the template's Globals): only its nodes are probed.
    cluster: Annotated[str, ClusterName("CLUSTER_NAME")]
    controller_group: Annotated[str, Text("CONTROLLER_GROUP")]


@dataclass(frozen=True)
class HealthCheckFunction:
    runner: CommandRunner
    own: OwnControllers
    probe: ProbeSettings

    @classmethod
    def from_settings(cls, settings: HealthCheckFunctionSettings) -> HealthCheckFunction:
        import boto3

        own = OwnControllers(
            settings.cluster, settings.controller_group, settings.probe.transport, boto3.client("sagemaker")
        )
        return cls(runner_for(settings.probe.transport), own, settings.probe)

    def handle(self, event: object, context: LambdaContext) -> dict[str, Any]:
        node = self.own.check(Controller.from_json(event))
        logger.append_keys(instance_id=node.instance_id)
        report = check_controller(
            node, self.runner, document=self.probe.document, deadline_seconds=self.probe.deadline_seconds
        )
        logger.info("controller checked", extra={"status": report.status.value, "reason": report.reason})
        return report.to_json()
