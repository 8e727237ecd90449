"""RestoreRedundancyFunction and its settings: one step of the restore state machine, logged,
with the clients made from the settings.

``InvalidRestoreRequest`` and ``RestoreCommandFailed`` propagate for the state machine's Catch.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Final

from hyperpod_ha.acting.notice_topic import NoticeTopic
from hyperpod_ha.acting.settings import ActingSettings
from hyperpod_ha.acting.steps import logged_step
from hyperpod_ha.environment import Number, OptionalText, Settings, Text
from hyperpod_ha.incidents import IncidentSettings
from hyperpod_ha.own_executions import OwnExecutions, StepFunctionsExecutions
from hyperpod_ha.restore.context import RestoreContext
from hyperpod_ha.restore.errors import InvalidRestoreRequest, RestoreCommandFailed
from hyperpod_ha.restore.reboot import NodeReboots
from hyperpod_ha.restore.secret_versions import SecretRollouts
from hyperpod_ha.restore.settings import RestoreSettings
from hyperpod_ha.restore.state_items import RestoreItems
from hyperpod_ha.restore.steps import run_step
from hyperpod_ha.restore.verification import FollowingRuns
from hyperpod_ha.runs.settings import VerificationRunsSettings
from hyperpod_ha.status_records import StatusRecords

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

# The template's value: the script starts slurmctld (40 s at most) and waits 20 s for ping.
DEFAULT_COMMAND_DEADLINE_SECONDS: Final = 120


@dataclass(frozen=True)
class RestoreRedundancyFunctionSettings(Settings):
    """RestoreRedundancyFunction's environment."""

    acting: ActingSettings
    restore_document: Annotated[str, Text("RESTORE_DOCUMENT")]
    command_deadline_seconds: Annotated[
        float,
        Number("RESTORE_COMMAND_DEADLINE_SECONDS", DEFAULT_COMMAND_DEADLINE_SECONDS, minimum=1, whole=True),
    ]
    # A roll-out of this secret in progress blocks a restore (secret_versions).
    db_secret_arn: Annotated[str | None, OptionalText("DB_SECRET_ARN")]
    restore: RestoreSettings
    incidents: IncidentSettings  # its topic gets the restore-action notice
    verification: VerificationRunsSettings  # the run that follows an action
    # This stack's restore state machine, by its name (it references this function: a Ref would
    # be a cycle): begin, plan, finish and verify act only inside its running executions.
    state_machine_arn: Annotated[str, Text("RESTORE_STATE_MACHINE_ARN")]


@dataclass(frozen=True)
class RestoreRedundancyFunction:
    context: RestoreContext

    @classmethod
    def from_settings(cls, settings: RestoreRedundancyFunctionSettings) -> RestoreRedundancyFunction:
        import boto3

        dynamodb = boto3.client("dynamodb")
        sagemaker = cache(lambda: boto3.client("sagemaker"))
        acting = settings.acting
        table, cluster = acting.state_table, acting.cluster
        return cls(
            RestoreContext(
                cluster=cluster,
                settings=settings.restore,
                document=settings.restore_document,
                transport=acting.command_transport,
                lease=acting.lease(dynamodb, "restore"),
                controllers=acting.discovery(sagemaker),
                commands=acting.documents(settings.command_deadline_seconds, RestoreCommandFailed),
                items=RestoreItems(dynamodb, table, cluster),
                rollouts=SecretRollouts(
                    cache(lambda: boto3.client("secretsmanager")), settings.db_secret_arn
                ),
                status=StatusRecords(dynamodb, table),
                topic=NoticeTopic(boto3.client("sns"), settings.incidents.topic_arn),
                runs=FollowingRuns(settings.verification, dynamodb, cluster),
                executions=OwnExecutions(
                    settings.state_machine_arn,
                    StepFunctionsExecutions(cache(lambda: boto3.client("stepfunctions"))),
                    "restore",
                ),
                reboots=NodeReboots(sagemaker, cluster),
                region=settings.incidents.region,
            )
        )

    def handle(self, event: Any, context: LambdaContext) -> dict[str, Any]:
        return logged_step(
            "restore",
            event,
            lambda step: run_step(step, self.context),
            (InvalidRestoreRequest, RestoreCommandFailed),
            ("taken", "act", "blocked", "stopped", "next", "verify"),
        )
