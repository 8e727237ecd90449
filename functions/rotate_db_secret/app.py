"""RotateDbSecretFunction: rotate the Slurm accounting database's secret, then roll it out.

Secrets Manager's rotation steps, or ``{"action": "rollout"}`` alone: see
``hyperpod_ha.rotation.service``.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from hyperpod_ha.observability import observed
from hyperpod_ha.rotation.sdk_logs import silence_sdk_wire_logs
from hyperpod_ha.rotation.wiring import aws_collaborators

if TYPE_CHECKING:
    from hyperpod_ha.rotation.service import SecretRotation

silence_sdk_wire_logs()


@cache
def _service() -> SecretRotation:
    from hyperpod_ha.rotation.function_settings import RotateDbSecretSettings
    from hyperpod_ha.rotation.service import SecretRotation

    settings = RotateDbSecretSettings.from_environment()
    return SecretRotation(settings, aws_collaborators(settings))


@observed
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    silence_sdk_wire_logs()  # again: a test or a root logger may have lowered them since
    return _service().handle(event)
