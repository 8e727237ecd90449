"""RotateDbSecretFunction's one service: a step of the rotation contract (after
``finishSecret`` the roll-out to every controller), or the roll-out alone.

Two kinds of event:

- Secrets Manager's ``{"Step", "SecretId", "ClientRequestToken"}``.
- ``{"action": "rollout", "controllers": [...]}`` (optional ``SecretId``, which must be
  ``DB_SECRET_ARN``): the roll-out alone, to re-run it after a failure. The controllers are
  always discovered; ``controllers`` (objects with ``instance_id``) only chooses among them.
"""

from __future__ import annotations

from typing import Any

from hyperpod_ha.controllers.orchestration import SlurmOrchestration
from hyperpod_ha.errors import ConfigurationError
from hyperpod_ha.rotation.accounting_mode import refuse_external_database
from hyperpod_ha.rotation.contract import RotationEvent, Step, check_own_secret
from hyperpod_ha.rotation.errors import RotationRequestInvalid
from hyperpod_ha.rotation.function_settings import RotateDbSecretSettings
from hyperpod_ha.rotation.rollout_coordination import RolloutCoordinator
from hyperpod_ha.rotation.steps import Rotation
from hyperpod_ha.rotation.versions import SecretVersions, rotation_in_progress
from hyperpod_ha.rotation.wiring import Collaborators


class SecretRotation:
    def __init__(self, settings: RotateDbSecretSettings, collaborators: Collaborators) -> None:
        self.settings = settings
        self._versions = SecretVersions(collaborators.secrets)
        self._rotation = Rotation(collaborators.secrets, collaborators.connector, settings.rotation)
        self._rollout = RolloutCoordinator(settings, collaborators)
        self._with = collaborators

    def _orchestration(self) -> SlurmOrchestration:
        """How HyperPod runs the cluster's Slurm (DescribeCluster, through the discovery)."""
        return self._with.discover(self.settings.cluster, self.settings.controller_group).accounting

    def handle(self, event: object) -> dict[str, Any]:
        if not isinstance(event, dict):
            raise RotationRequestInvalid("the event is not a JSON object")
        if event.get("action") == "rollout":
            return self._rollout_action(event)
        rotation_event = RotationEvent.parse(event, self.settings.secret_arn)
        if rotation_event.step in (Step.CREATE, Step.SET):
            refuse_external_database(self.settings.cluster, self._orchestration)
        result: dict[str, Any] = dict(self._rotation.run(rotation_event).to_json())
        if rotation_event.step is Step.FINISH:
            # Also when the version was already AWSCURRENT: a retried finishSecret must not skip
            # the roll-out its first attempt may never have reached (the script is twice-safe).
            report = self._rollout.roll_out(result["secret_arn"], self._rollout.controllers())
            result["rollout"] = report.to_json()
        return result

    def _rollout_action(self, event: dict[str, Any]) -> dict[str, Any]:
        secret_id = event.get("SecretId") or self.settings.secret_arn
        if not secret_id:
            raise ConfigurationError("environment variable DB_SECRET_ARN is not set")
        check_own_secret(secret_id, self.settings.secret_arn)
        description = self._versions.describe(secret_id)
        arn = description["ARN"]
        if rotation_in_progress(description.get("VersionIdsToStages", {})):
            # Mid-rotation, AWSCURRENT may already be dead (single user): the nodes would fetch it.
            raise RotationRequestInvalid(f"a rotation of {arn} is in progress: roll out after it")
        report = self._rollout.roll_out(arn, self._rollout.controllers(event.get("controllers")))
        return {"action": "rollout", "secret_arn": arn, "rollout": report.to_json()}
