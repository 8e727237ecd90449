"""RotateDbSecretFunction and its settings: a step of the rotation contract (after
``finishSecret`` the roll-out to every controller), or the roll-out alone.

Two kinds of event:

- Secrets Manager's ``{"Step", "SecretId", "ClientRequestToken"}``.
- ``{"action": "rollout", "controllers": [...]}`` (optional ``SecretId``, which must be
  ``DB_SECRET_ARN``): the roll-out alone, to re-run it after a failure. The controllers are
  always discovered; ``controllers`` (objects with ``instance_id``) only chooses among them.

Every roll-out (finishSecret's and the action's) holds the cluster's lease, kind ``rollout``
(:mod:`.lease`), from before anything changes to its end: while a drill or a restore holds it the
roll-out is refused, while a run holds it the roll-out waits (it fails, to be retried). Triggers
that joined the roll-out meanwhile get their verification run once it has ended.
"""

from __future__ import annotations

import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Final

from hyperpod_ha.controllers.orchestration import SlurmOrchestration
from hyperpod_ha.controllers.settings import DEFAULT_TRANSPORT
from hyperpod_ha.environment import Integer, Number, OptionalText, Settings, Text
from hyperpod_ha.errors import ConfigurationError
from hyperpod_ha.incidents.settings import IncidentSettings
from hyperpod_ha.observability import logger
from hyperpod_ha.rotation.accounting_mode import refuse_external_database
from hyperpod_ha.rotation.collaborators import Collaborators
from hyperpod_ha.rotation.contract import RotationEvent, Step, check_own_secret
from hyperpod_ha.rotation.controller_order import check_given
from hyperpod_ha.rotation.errors import RotationRequestInvalid
from hyperpod_ha.rotation.lease import Invocation, RolloutLease
from hyperpod_ha.rotation.rollout import RolloutSettings
from hyperpod_ha.rotation.rollout_coordination import RolloutCoordinator
from hyperpod_ha.rotation.rollout_document import DEFAULT_CONF_PATH
from hyperpod_ha.rotation.sdk_logs import silence_sdk_wire_logs
from hyperpod_ha.rotation.settings import RotationSettings
from hyperpod_ha.rotation.steps import Rotation
from hyperpod_ha.rotation.versions import SecretVersions, rotation_in_progress
from hyperpod_ha.runs.settings import VerificationRunsSettings

if TYPE_CHECKING:
    from collections.abc import Iterator

    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.incidents import Incidents
    from hyperpod_ha.lease import Lease
    from hyperpod_ha.status_records import StatusRecords


# The template's Timeout: how long an invocation may hold the cluster at most.
DEFAULT_TIMEOUT_SECONDS: Final = 900


@dataclass(frozen=True)
class RotateDbSecretFunctionSettings(Settings):
    """RotateDbSecretFunction's environment: every variable the function, the rotation and the
    roll-out read."""

    rotation: RotationSettings
    # The secret when the event names none.
    secret_arn: Annotated[str | None, OptionalText("DB_SECRET_ARN")]
    ca_bundle: Annotated[str | None, OptionalText("DB_CA_BUNDLE")]  # see rotation.database.TlsPolicy
    cluster: Annotated[str, Text("CLUSTER_NAME")]
    controller_group: Annotated[str, Text("CONTROLLER_GROUP")]
    command_transport: Annotated[str, Text("COMMAND_TRANSPORT", DEFAULT_TRANSPORT)]
    rollout_document: Annotated[str, Text("ROLLOUT_DOCUMENT")]
    rollout_deadline_seconds: Annotated[float, Number("ROLLOUT_DEADLINE_SECONDS", 180, whole=True)]
    conf_path: Annotated[str, Text("SLURMDBD_CONF", DEFAULT_CONF_PATH)]
    owner: Annotated[str, Text("SLURMDBD_OWNER", "slurm")]
    verify_seconds: Annotated[int, Integer("SLURMDBD_VERIFY_SECONDS", 45)]
    incidents: IncidentSettings  # a failed roll-out opens one
    # The state table: the cluster's lease a roll-out holds, the status records for `hyperpod-ha
    # status`; and the verification a trigger that joined the roll-out gets once it has ended.
    verification: VerificationRunsSettings

    def rollout(self, secret_arn: str) -> RolloutSettings:
        # In RolloutSettings' field order (a test checks each field).
        return RolloutSettings(
            secret_arn,
            self.rollout_document,
            self.rollout_deadline_seconds,
            self.conf_path,
            self.owner,
            self.verify_seconds,
        )


def aws_collaborators(settings: RotateDbSecretFunctionSettings) -> Collaborators:
    import boto3

    from hyperpod_ha.commands import runner_for
    from hyperpod_ha.controllers.discovery import discover_controllers
    from hyperpod_ha.rotation.database import TlsPolicy, pymysql_connector

    sagemaker = cache(lambda: boto3.client("sagemaker"))

    def incidents() -> Incidents:
        from hyperpod_ha.incidents import Incidents

        return Incidents.from_settings(settings.incidents)

    dynamodb = cache(lambda: boto3.client("dynamodb"))

    def records() -> StatusRecords | None:
        from hyperpod_ha.status_records import StatusRecords

        return StatusRecords(dynamodb(), settings.verification.state_table)

    def lease() -> RolloutLease:
        return RolloutLease(dynamodb(), settings.verification.state_table, settings.cluster)

    def verify_after(lease_id: str, joined: int) -> str:
        from hyperpod_ha.human_time import iso_utc
        from hyperpod_ha.runs.verification_runs import VerificationRuns
        from hyperpod_ha.trigger import Trigger

        runs = VerificationRuns.from_settings(settings.verification, dynamodb())
        # One run per roll-out: a retry joins or finds the same run.
        trigger = Trigger("operator", f"rollout-{lease_id}", {"rollout": lease_id}, iso_utc(time.time()))
        reason = f"after a roll-out of the database secret: {joined} trigger(s) joined it"
        return runs.start_or_join(settings.cluster, trigger, reason).execution_arn

    return Collaborators(
        secrets=boto3.client("secretsmanager"),
        connector=pymysql_connector(TlsPolicy.from_setting(settings.ca_bundle)),
        runner=cache(lambda: runner_for(settings.command_transport)),
        discover=lambda cluster, group: discover_controllers(sagemaker(), cluster, group),
        incidents=incidents,
        records=records,
        lease=lease,
        verify_after=verify_after,
    )


class RotateDbSecretFunction:
    def __init__(self, settings: RotateDbSecretFunctionSettings, collaborators: Collaborators) -> None:
        self.settings = settings
        self._versions = SecretVersions(collaborators.secrets)
        self._rotation = Rotation(collaborators.secrets, collaborators.connector, settings.rotation)
        self._rollout = RolloutCoordinator(
            settings.cluster, settings.controller_group, settings.rollout, collaborators
        )
        self._with = collaborators

    @classmethod
    def from_settings(cls, settings: RotateDbSecretFunctionSettings) -> RotateDbSecretFunction:
        silence_sdk_wire_logs()  # before the first client: the SDK's wire logs would hold the secret
        return cls(settings, aws_collaborators(settings))

    def _orchestration(self) -> SlurmOrchestration:
        """How HyperPod runs the cluster's Slurm (DescribeCluster, through the discovery)."""
        return self._with.discover(self.settings.cluster, self.settings.controller_group).accounting

    def handle(self, event: object, context: LambdaContext) -> dict[str, Any]:
        silence_sdk_wire_logs()  # again: a test or a root logger may have lowered them since
        if not isinstance(event, dict):
            raise RotationRequestInvalid("the event is not a JSON object")
        if event.get("action") == "rollout":
            return self._rollout_action(event, context)
        rotation_event = RotationEvent.parse(event, self.settings.secret_arn)
        if rotation_event.step in (Step.CREATE, Step.SET):
            refuse_external_database(self.settings.cluster, self._orchestration)
        if rotation_event.step is not Step.FINISH:
            return dict(self._rotation.run(rotation_event).to_json())
        # finishSecret starts the roll-out: the cluster is held before AWSCURRENT moves, so a
        # refused one changes nothing and Secrets Manager's retry of the rotation finds it free.
        with self._holding_cluster(_invocation(context), rotation_event.token) as joined:
            result: dict[str, Any] = dict(self._rotation.run(rotation_event).to_json())
            # Also when the version was already AWSCURRENT: a retried finishSecret must not skip
            # the roll-out its first attempt may never have reached (the script is twice-safe).
            report = self._rollout.roll_out(result["secret_arn"], self._rollout.controllers())
            result["rollout"] = report.to_json()
        result["rollout"]["joined"] = joined
        return result

    @contextmanager
    def _holding_cluster(self, invocation: Invocation, key: str | None = None) -> Iterator[dict[str, Any]]:
        """The cluster's lease for the roll-out of ``key`` (else of the invocation), released when
        it ends, whatever way; yields what is said of the triggers that joined it meanwhile."""
        lease = self._with.lease()
        held: Lease = lease.take(key or invocation.request_id, invocation)
        joined: dict[str, Any] = {"count": 0}
        try:
            yield joined
        finally:
            joined["count"] = lease.release(held)
            if joined["count"]:
                # A trigger that came meanwhile (a failover, a watchdog tick) gets its verification.
                joined["verification"] = self._with.verify_after(held.lease_id, joined["count"])
                logger.info("verification after the roll-out", extra=dict(joined))

    def _rollout_action(self, event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        secret_id = event.get("SecretId") or self.settings.secret_arn
        if not secret_id:
            raise ConfigurationError("environment variable DB_SECRET_ARN is not set")
        check_own_secret(secret_id, self.settings.secret_arn)
        description = self._versions.describe(secret_id)
        arn = description["ARN"]
        if rotation_in_progress(description.get("VersionIdsToStages", {})):
            # Mid-rotation, AWSCURRENT may already be dead (single user): the nodes would fetch it.
            raise RotationRequestInvalid(f"a rotation of {arn} is in progress: roll out after it")
        given = event.get("controllers")
        if given is not None:
            check_given(given)  # a bad request is refused before the cluster is held
        # Lambda's retries of one invocation keep its request id: they take the same lease again.
        with self._holding_cluster(_invocation(context)) as joined:
            report = self._rollout.roll_out(arn, self._rollout.controllers(given))
        rollout = {**report.to_json(), "joined": joined}
        return {"action": "rollout", "secret_arn": arn, "rollout": rollout}


def _invocation(context: LambdaContext) -> Invocation:
    """This invocation, as its lease names it (an invocation without Lambda's context, a test's,
    is a new one each time and may run the function's whole timeout)."""
    request_id = getattr(context, "aws_request_id", "") or uuid.uuid4().hex
    arn = getattr(context, "invoked_function_arn", "") or "RotateDbSecretFunction"
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    seconds = remaining() / 1000 if callable(remaining) else DEFAULT_TIMEOUT_SECONDS
    return Invocation(str(arn), str(request_id), float(seconds))
