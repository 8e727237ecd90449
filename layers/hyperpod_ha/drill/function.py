"""FailoverDrillFunction and its settings: one step of the drill state machine, logged, with the
clients made from the settings.

``InvalidDrillRequest`` and ``DrillCommandFailed`` propagate for the state machine's Catch,
which writes the drill report with the error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any

from hyperpod_ha.commands import runner_for
from hyperpod_ha.controllers.settings import DEFAULT_TRANSPORT, ClusterName
from hyperpod_ha.drill.lease import DrillLease
from hyperpod_ha.drill.models import InvalidDrillRequest
from hyperpod_ha.drill.node_commands import DrillCommandFailed, NodeCommands
from hyperpod_ha.drill.records import DrillRecords
from hyperpod_ha.drill.steps import DrillContext, run_step
from hyperpod_ha.environment import Number, Settings, Text
from hyperpod_ha.incidents import Incidents, IncidentSettings
from hyperpod_ha.lease import LeaseSeconds
from hyperpod_ha.observability import logger, metrics
from hyperpod_ha.status_records import StatusRecords

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

# The template's value.
DEFAULT_COMMAND_DEADLINE_SECONDS = 60


@dataclass(frozen=True)
class FailoverDrillFunctionSettings(Settings):
    """FailoverDrillFunction's environment."""

    # The stack's cluster and controller group (the template's Globals): a drill acts on no other.
    cluster: Annotated[str, ClusterName("CLUSTER_NAME")]
    controller_group: Annotated[str, Text("CONTROLLER_GROUP")]
    state_table: Annotated[str, Text("STATE_TABLE")]
    # Checked by the transports' registry (runner_for), which knows the names; the plan step
    # refuses a transport that cannot run the drill's Session documents.
    command_transport: Annotated[str, Text("COMMAND_TRANSPORT", DEFAULT_TRANSPORT)]
    takeover_document: Annotated[str, Text("TAKEOVER_DOCUMENT")]
    jobs_document: Annotated[str, Text("JOBS_DOCUMENT")]
    accounting_document: Annotated[str, Text("ACCOUNTING_DOCUMENT")]
    command_deadline_seconds: Annotated[
        float,
        Number("DRILL_COMMAND_DEADLINE_SECONDS", DEFAULT_COMMAND_DEADLINE_SECONDS, minimum=1, whole=True),
    ]
    lease_seconds: LeaseSeconds  # the same lease, and setting, as the verification runs'
    incidents: IncidentSettings  # its topic also gets the drill's summary


@dataclass(frozen=True)
class FailoverDrillFunction:
    context: DrillContext

    @classmethod
    def from_settings(cls, settings: FailoverDrillFunctionSettings) -> FailoverDrillFunction:
        import boto3

        from hyperpod_ha.controllers.discovery import discover_controllers

        dynamodb, ssm, sns = boto3.client("dynamodb"), boto3.client("ssm"), boto3.client("sns")
        sagemaker = cache(lambda: boto3.client("sagemaker"))
        cluster, group = settings.cluster, settings.controller_group
        return cls(
            DrillContext(
                cluster=cluster,
                controllers=lambda: discover_controllers(sagemaker(), cluster, group),
                lease=DrillLease(dynamodb, settings.state_table, settings.lease_seconds),
                # Most steps run no command: the transport is made on first use.
                commands=cache(
                    lambda: NodeCommands(
                        runner_for(settings.command_transport),
                        settings.takeover_document,
                        settings.jobs_document,
                        settings.accounting_document,
                        settings.command_deadline_seconds,
                    )
                ),
                records=DrillRecords(ssm, sns, settings.incidents.topic_arn, settings.incidents.region),
                status=StatusRecords(dynamodb, settings.state_table),
                incidents=cache(lambda: Incidents.from_settings(settings.incidents, ssm, sns)),
                transport=settings.command_transport,
                metric=lambda name, unit, value: metrics.add_metric(name=name, unit=unit, value=value),
            )
        )

    def handle(self, event: Any, context: LambdaContext) -> dict[str, Any]:
        action = event.get("action") if isinstance(event, Mapping) else None
        logger.append_keys(action=action)
        try:
            result = run_step(event, self.context)
        except (InvalidDrillRequest, DrillCommandFailed) as error:
            logger.warning(
                "drill step failed", extra={"error_type": type(error).__name__, "reason": str(error)}
            )
            raise
        if action == "finish":
            metrics.flush_metrics()  # only the report counts; the other steps emit nothing
        logger.info("drill step done", extra={"outcome": result.get("outcome"), "next": result.get("next")})
        return result
