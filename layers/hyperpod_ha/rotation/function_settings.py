"""RotateDbSecretFunction's settings: every variable the function, the rotation and the
roll-out read, read once from the environment the template gives it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

from hyperpod_ha.controllers.settings import DEFAULT_TRANSPORT
from hyperpod_ha.environment import Environment, Settings, integer, optional, text
from hyperpod_ha.incidents.settings import IncidentSettings
from hyperpod_ha.rotation.contract import RotationSettings, Strategy
from hyperpod_ha.rotation.rollout import RolloutSettings
from hyperpod_ha.rotation.rollout_document import DEFAULT_CONF_PATH


@dataclass(frozen=True)
class RotateDbSecretSettings(Settings):
    rotation: RotationSettings
    secret_arn: str | None  # DB_SECRET_ARN: the secret when the event names none
    ca_bundle: str | None  # DB_CA_BUNDLE, see rotation.database.TlsPolicy
    cluster: str
    controller_group: str
    command_transport: str
    rollout_document: str
    rollout_deadline_seconds: float
    conf_path: str
    owner: str
    verify_seconds: int
    incidents: IncidentSettings  # a failed roll-out opens one
    state_table: str | None  # the status records for `hyperpod-ha status`

    @classmethod
    def read(cls, env: Environment) -> Self:
        return cls(
            rotation=RotationSettings(
                # Its own error (RotationRequestInvalid) names ROTATION_STRATEGY.
                strategy=Strategy.parse(text(env, "ROTATION_STRATEGY", Strategy.ALTERNATING.value)),
                default_host=optional(env, "DB_HOST"),
                default_port=integer(env, "DB_PORT", 3306),
                master_secret_arn=optional(env, "MASTER_SECRET_ARN"),
            ),
            secret_arn=optional(env, "DB_SECRET_ARN"),
            ca_bundle=optional(env, "DB_CA_BUNDLE"),
            cluster=text(env, "CLUSTER_NAME"),
            controller_group=text(env, "CONTROLLER_GROUP"),
            command_transport=text(env, "COMMAND_TRANSPORT", DEFAULT_TRANSPORT),
            rollout_document=text(env, "ROLLOUT_DOCUMENT"),
            rollout_deadline_seconds=float(integer(env, "ROLLOUT_DEADLINE_SECONDS", 180)),
            conf_path=text(env, "SLURMDBD_CONF", DEFAULT_CONF_PATH),
            owner=text(env, "SLURMDBD_OWNER", "slurm"),
            verify_seconds=integer(env, "SLURMDBD_VERIFY_SECONDS", 45),
            incidents=IncidentSettings.from_environment(env),
            state_table=optional(env, "STATE_TABLE"),
        )

    def rollout(self, secret_arn: str) -> RolloutSettings:
        return RolloutSettings(
            secret_arn=secret_arn,
            document=self.rollout_document,
            deadline_seconds=self.rollout_deadline_seconds,
            conf_path=self.conf_path,
            owner=self.owner,
            verify_seconds=self.verify_seconds,
        )
