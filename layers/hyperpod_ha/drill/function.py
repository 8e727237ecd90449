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

from hyperpod_ha.acting.settings import ActingSettings
from hyperpod_ha.acting.steps import logged_step
from hyperpod_ha.drill.models import InvalidDrillRequest
from hyperpod_ha.drill.node_commands import DrillCommandFailed, NodeCommands
from hyperpod_ha.drill.records import DrillRecords
from hyperpod_ha.drill.steps import DrillContext, run_step
from hyperpod_ha.environment import Number, Settings, Text
from hyperpod_ha.incidents import Incidents, IncidentSettings
from hyperpod_ha.observability import metrics
from hyperpod_ha.own_executions import OwnExecutions, StepFunctionsExecutions
from hyperpod_ha.status_records import StatusRecords

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

# The template's value.
DEFAULT_COMMAND_DEADLINE_SECONDS = 60


@dataclass(frozen=True)
class FailoverDrillFunctionSettings(Settings):
    """FailoverDrillFunction's environment."""

    acting: ActingSettings
    takeover_document: Annotated[str, Text("TAKEOVER_DOCUMENT")]
    jobs_document: Annotated[str, Text("JOBS_DOCUMENT")]
    accounting_document: Annotated[str, Text("ACCOUNTING_DOCUMENT")]
    command_deadline_seconds: Annotated[
        float,
        Number("DRILL_COMMAND_DEADLINE_SECONDS", DEFAULT_COMMAND_DEADLINE_SECONDS, minimum=1, whole=True),
    ]
    incidents: IncidentSettings  # its topic also gets the drill's summary
    # This stack's drill state machine, by its name (it references this function: a Ref would be
    # a cycle): begin and finish act only inside its running executions.
    state_machine_arn: Annotated[str, Text("DRILL_STATE_MACHINE_ARN")]


@dataclass(frozen=True)
class FailoverDrillFunction:
    context: DrillContext

    @classmethod
    def from_settings(cls, settings: FailoverDrillFunctionSettings) -> FailoverDrillFunction:
        import boto3

        dynamodb, ssm, sns = boto3.client("dynamodb"), boto3.client("ssm"), boto3.client("sns")
        acting = settings.acting
        documents = acting.documents(settings.command_deadline_seconds, DrillCommandFailed)
        return cls(
            DrillContext(
                cluster=acting.cluster,
                controllers=acting.discovery(cache(lambda: boto3.client("sagemaker"))),
                lease=acting.lease(dynamodb, "drill"),
                commands=lambda: NodeCommands(
                    documents(),
                    settings.takeover_document,
                    settings.jobs_document,
                    settings.accounting_document,
                ),
                records=DrillRecords(
                    ssm,
                    sns,
                    settings.incidents.topic_arn,
                    settings.incidents.region,
                    settings.incidents.stack_name,
                ),
                status=StatusRecords(dynamodb, acting.state_table),
                incidents=cache(lambda: Incidents.from_settings(settings.incidents, ssm, sns)),
                transport=acting.command_transport,
                executions=OwnExecutions(
                    settings.state_machine_arn,
                    StepFunctionsExecutions(cache(lambda: boto3.client("stepfunctions"))),
                    "drill",
                ),
                metric=lambda name, unit, value: metrics.add_metric(name=name, unit=unit, value=value),
            )
        )

    def handle(self, event: Any, context: LambdaContext) -> dict[str, Any]:
        result = logged_step(
            "drill",
            event,
            lambda step: run_step(step, self.context),
            (InvalidDrillRequest, DrillCommandFailed),
            ("outcome", "next"),
        )
        if isinstance(event, Mapping) and event.get("action") == "finish":
            metrics.flush_metrics()  # only the report counts; the other steps emit nothing
        return result
