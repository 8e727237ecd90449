"""The settings a rotation runs with: the strategy and where the database is (a part of
RotateDbSecretFunction's settings, whose own class is in :mod:`hyperpod_ha.rotation.function`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from hyperpod_ha.environment import Integer, OptionalText, Settings, Variable
from hyperpod_ha.rotation.contract import Strategy


@dataclass(frozen=True)
class _StrategyVariable(Variable[Strategy]):
    def parse(self, raw: str) -> Strategy:
        return Strategy.parse(raw)  # its own error (RotationRequestInvalid) names the variable


@dataclass(frozen=True)
class RotationSettings(Settings):
    """How the secret is rotated (a part of RotateDbSecretFunction's settings)."""

    strategy: Annotated[Strategy, _StrategyVariable("ROTATION_STRATEGY", Strategy.SINGLE.value)]
    # For secrets without "host" (the HyperPod sample's).
    default_host: Annotated[str | None, OptionalText("DB_HOST")]
    default_port: Annotated[int, Integer("DB_PORT", 3306)] = 3306
    # The secret of a user that creates and grants the twin (alternating).
    master_secret_arn: Annotated[str | None, OptionalText("MASTER_SECRET_ARN")] = None
