"""The four steps of the Secrets Manager rotation contract, for the accounting database.

Secrets Manager retries a failed rotation from the start with the same token, so every step
checks what is already done before doing it. :class:`Rotation` checks the token's version
stages and runs one step: :mod:`.step_create` (``createSecret``), :mod:`.step_set` and
:mod:`.step_set_alternating` (``setSecret``), :mod:`.step_check` (``testSecret``),
:mod:`.step_finish` (``finishSecret``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from hyperpod_ha.observability import logger
from hyperpod_ha.rotation.contract import RotationEvent, Step, StepResult
from hyperpod_ha.rotation.database import Connector
from hyperpod_ha.rotation.errors import RotationRequestInvalid
from hyperpod_ha.rotation.secret import AWSCURRENT, AWSPENDING
from hyperpod_ha.rotation.settings import RotationSettings
from hyperpod_ha.rotation.step_check import test_secret
from hyperpod_ha.rotation.step_create import create_secret
from hyperpod_ha.rotation.step_finish import finish_secret
from hyperpod_ha.rotation.step_set import set_secret
from hyperpod_ha.rotation.versions import SecretVersions, Stages

if TYPE_CHECKING:
    from mypy_boto3_secretsmanager import SecretsManagerClient


class Rotation:
    def __init__(
        self, secrets: SecretsManagerClient, connector: Connector, settings: RotationSettings
    ) -> None:
        self._versions = SecretVersions(secrets)
        self._connect = connector
        self._settings = settings

    def run(self, event: RotationEvent) -> StepResult:
        description = self._versions.describe(event.secret_id)
        arn = description["ARN"]
        if not description.get("RotationEnabled"):
            raise RotationRequestInvalid(f"rotation is not enabled for secret {arn}")
        stages = description.get("VersionIdsToStages", {})
        if event.token not in stages:
            raise RotationRequestInvalid(f"version {event.token} of secret {arn} has no stage for rotation")
        if AWSCURRENT in stages[event.token]:
            if AWSPENDING in stages[event.token]:
                # A finishSecret that stopped between its two label moves: complete it.
                self._versions.drop_pending_label(arn, event.token)
            logger.info(
                "version is already AWSCURRENT: nothing to do",
                extra={"step": event.step.value, "secret_arn": arn, "token": event.token},
            )
            return self._result(event, arn, "already_current")
        if AWSPENDING not in stages[event.token]:
            raise RotationRequestInvalid(f"version {event.token} of secret {arn} is not AWSPENDING")
        handler: dict[Step, Callable[[str, str, Stages], str]] = {
            Step.CREATE: self.create_secret,
            Step.SET: self.set_secret,
            Step.TEST: self.test_secret,
            Step.FINISH: self.finish_secret,
        }
        outcome = handler[event.step](arn, event.token, stages)
        logger.info(
            "rotation step done",
            extra={
                "step": event.step.value,
                "secret_arn": arn,
                "token": event.token,
                "outcome": outcome,
                "strategy": self._settings.strategy.value,
            },
        )
        return self._result(event, arn, outcome)

    def _result(self, event: RotationEvent, arn: str, outcome: str) -> StepResult:
        return StepResult(event.step, arn, event.token, outcome, self._settings.strategy)

    def create_secret(self, arn: str, token: str, stages: Stages) -> str:
        return create_secret(self._versions, self._settings, arn, token)

    def set_secret(self, arn: str, token: str, stages: Stages) -> str:
        return set_secret(self._versions, self._connect, self._settings, arn, token, stages)

    def test_secret(self, arn: str, token: str, stages: Stages) -> str:
        outcome = test_secret(self._versions, self._connect, self._settings, arn, token)
        # Recorded on the version only once it passed: finishSecret asks for it.
        self._versions.mark_tested(arn, token, stages)
        return outcome

    def finish_secret(self, arn: str, token: str, stages: Stages) -> str:
        return finish_secret(self._versions, arn, token, stages)
