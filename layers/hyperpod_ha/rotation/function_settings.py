"""RotateDbSecretFunction's settings: every variable the function, the rotation and the
roll-out read, read once from the environment the template gives it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from hyperpod_ha.controllers.settings import DEFAULT_TRANSPORT
from hyperpod_ha.environment import Integer, Number, OptionalText, Settings, Text
from hyperpod_ha.incidents.settings import IncidentSettings
from hyperpod_ha.rotation.contract import RotationSettings
from hyperpod_ha.rotation.rollout import RolloutSettings
from hyperpod_ha.rotation.rollout_document import DEFAULT_CONF_PATH


@dataclass(frozen=True)
class RotateDbSecretSettings(Settings):
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
    # The status records for `hyperpod-ha status`.
    state_table: Annotated[str | None, OptionalText("STATE_TABLE")]

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
