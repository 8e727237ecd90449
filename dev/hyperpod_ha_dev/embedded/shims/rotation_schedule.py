"""AWS::SecretsManager::RotationSchedule. moto 5.2.5 has no CloudFormation model for it, and its
RotateSecret always starts a rotation (an AWSPENDING version, the function invoked), where
CloudFormation with ``RotateImmediatelyOnUpdate: false`` (this template) only turns rotation on
with its rules. The secret's rotation is recorded here as RotateSecret records it in moto."""

from __future__ import annotations

import re
from typing import Any

from hyperpod_ha_dev.embedded.shims.model import Shim


class RotationSchedule(Shim):
    TYPE = "AWS::SecretsManager::RotationSchedule"

    @classmethod
    def create(cls, name: str, properties: dict[str, Any], account: str, region: str) -> Shim:
        from moto.secretsmanager.models import secretsmanager_backends

        rules = properties.get("RotationRules", {})
        days = re.fullmatch(r"rate\((\d+) days?\)", str(rules.get("ScheduleExpression", "")))
        if properties.get("RotateImmediatelyOnUpdate", True) or days is None:
            raise ValueError(
                f"the embedded stack records only a rotation every N days, not at once: {properties}"
            )
        secret: Any = secretsmanager_backends[account][region].secrets[properties["SecretId"]]
        secret.rotation_lambda_arn = properties["RotationLambdaARN"]
        secret.auto_rotate_after_days = int(days.group(1))  # as moto describes rate(N days)
        secret.rotation_enabled = True
        secret.rotation_requested = True  # moto describes the rules only once a rotation was asked for
        return cls(properties["SecretId"], properties)
