"""RestoreRedundancyFunction and its settings: one step of the restore state machine, logged,
with the clients made from the settings.

``InvalidRestoreRequest`` and ``RestoreCommandFailed`` propagate for the state machine's Catch.
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Final

from hyperpod_ha.commands import runner_for
from hyperpod_ha.controllers.settings import DEFAULT_TRANSPORT
from hyperpod_ha.environment import Number, OptionalText, Settings, Text
from hyperpod_ha.incidents import IncidentSettings
from hyperpod_ha.lease import LeaseSeconds
from hyperpod_ha.observability import logger
from hyperpod_ha.restore.context import RestoreContext
from hyperpod_ha.restore.errors import InvalidRestoreRequest, RestoreCommandFailed
from hyperpod_ha.restore.settings import RestoreSettings
from hyperpod_ha.restore.steps import run_step
from hyperpod_ha.runs.settings import VerificationRunsSettings
from hyperpod_ha.status_records import StatusRecords

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

# The template's value: the script starts slurmctld (40 s at most) and waits 20 s for ping.
DEFAULT_COMMAND_DEADLINE_SECONDS: Final = 120


@dataclass(frozen=True)
class RestoreRedundancyFunctionSettings(Settings):
    """RestoreRedundancyFunction's environment."""

    cluster: Annotated[str, Text("CLUSTER_NAME")]
    # The steps that act discover this group's controllers themselves (the template's Globals).
    controller_group: Annotated[str, Text("CONTROLLER_GROUP")]
    state_table: Annotated[str, Text("STATE_TABLE")]
    # Checked by the transports' registry (runner_for); the plan step refuses a transport that
    # cannot run the restore's Session document.
    command_transport: Annotated[str, Text("COMMAND_TRANSPORT", DEFAULT_TRANSPORT)]
    restore_document: Annotated[str, Text("RESTORE_DOCUMENT")]
    command_deadline_seconds: Annotated[
        float,
        Number("RESTORE_COMMAND_DEADLINE_SECONDS", DEFAULT_COMMAND_DEADLINE_SECONDS, minimum=1, whole=True),
    ]
    # A roll-out of this secret in progress blocks a restore (secret_versions).
    db_secret_arn: Annotated[str | None, OptionalText("DB_SECRET_ARN")]
    lease_seconds: LeaseSeconds  # the same lease, and setting, as the runs' and drills'
    restore: RestoreSettings
    incidents: IncidentSettings  # its topic gets the restore-action notice
    verification: VerificationRunsSettings  # the run that follows an action


@dataclass(frozen=True)
class RestoreRedundancyFunction:
    context: RestoreContext

    @classmethod
    def from_settings(cls, settings: RestoreRedundancyFunctionSettings) -> RestoreRedundancyFunction:
        import boto3

        from hyperpod_ha import state_table
        from hyperpod_ha.controllers.discovery import discover_controllers
        from hyperpod_ha.restore.reboot import reboot_node
        from hyperpod_ha.restore.secret_versions import rollout_in_progress
        from hyperpod_ha.runs.verification_runs import VerificationRuns
        from hyperpod_ha.topic_messages import publish
        from hyperpod_ha.trigger import Trigger

        dynamodb, sns = boto3.client("dynamodb"), boto3.client("sns")
        sagemaker = cache(lambda: boto3.client("sagemaker"))
        table, cluster = settings.state_table, settings.cluster
        secret = settings.db_secret_arn
        topic = settings.incidents.topic_arn

        def start_verification(execution_id: str, reason: str) -> dict[str, Any]:
            runs = VerificationRuns.from_settings(settings.verification, dynamodb)
            now = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
            name = execution_id.rsplit(":", 1)[-1]
            # One run per restore execution: a retried step joins or finds the same run.
            trigger = Trigger("operator", f"restore-{name}"[:80] or uuid.uuid4().hex, {"restore": name}, now)
            decision = runs.start_or_join(cluster, trigger, reason)
            return {"outcome": decision.outcome, "execution_arn": decision.execution_arn}

        return cls(
            RestoreContext(
                cluster=cluster,
                settings=settings.restore,
                document=settings.restore_document,
                transport=settings.command_transport,
                lease_seconds=settings.lease_seconds,
                take_lease=lambda lease: state_table.put_lease(dynamodb, table, cluster, lease, retake=True),
                actions_this_hour=lambda hour: state_table.restore_actions(dynamodb, table, cluster, hour),
                count_action=lambda hour, most: state_table.count_restore_action(
                    dynamodb, table, cluster, hour, most, expires_at=(hour + 2) * 3600
                ),
                rollout=(
                    (lambda now: rollout_in_progress(boto3.client("secretsmanager"), secret, now))
                    if secret
                    else (lambda now: None)
                ),
                # Most steps run no command: the transport is made on first use.
                runner=cache(lambda: runner_for(settings.command_transport)),
                command_deadline_seconds=settings.command_deadline_seconds,
                status=StatusRecords(dynamodb, table),
                notify=lambda message: publish(sns, topic, message) if topic else None,
                start_verification=start_verification,
                lease=lambda: state_table.read_lease(dynamodb, table, cluster),
                controllers=lambda: discover_controllers(sagemaker(), cluster, settings.controller_group),
                region=settings.incidents.region,
                unreachable_since=lambda: state_table.unreachable_since(
                    dynamodb, table, cluster, time.time()
                ),
                reboot=lambda node: reboot_node(sagemaker(), cluster, node),
                restart_unreachable=lambda node, now: state_table.restart_unreachable(
                    dynamodb, table, cluster, node, now
                ),
            )
        )

    def handle(self, event: Any, context: LambdaContext) -> dict[str, Any]:
        action = event.get("action") if isinstance(event, Mapping) else None
        logger.append_keys(action=action)
        try:
            result = run_step(event, self.context)
        except (InvalidRestoreRequest, RestoreCommandFailed) as error:
            logger.warning(
                "restore step failed", extra={"error_type": type(error).__name__, "reason": str(error)}
            )
            raise
        logger.info(
            "restore step done",
            extra={key: result.get(key) for key in ("taken", "act", "blocked", "stopped", "next", "verify")},
        )
        return result
