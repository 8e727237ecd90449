"""The Secrets Manager rotation contract as data: the steps, the event, the strategy, the result
(the settings a rotation runs with are in :mod:`hyperpod_ha.rotation.settings`).

Secrets Manager calls the function with ``{"Step", "SecretId", "ClientRequestToken"}`` and
retries a failed rotation from the start with the same token.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from hyperpod_ha.rotation.errors import RotationRequestInvalid


class Strategy(Enum):
    ALTERNATING = "alternating"
    SINGLE = "single"

    @classmethod
    def parse(cls, value: str) -> Strategy:
        try:
            return cls(value.strip().lower())
        except ValueError:
            raise RotationRequestInvalid(
                f"ROTATION_STRATEGY must be one of {[s.value for s in cls]}, got {value!r}"
            ) from None


class Step(Enum):
    CREATE = "createSecret"
    SET = "setSecret"
    TEST = "testSecret"
    FINISH = "finishSecret"


@dataclass(frozen=True)
class RotationEvent:
    step: Step
    secret_id: str
    token: str

    @classmethod
    def parse(cls, event: Mapping[str, Any], default_secret_id: str | None = None) -> RotationEvent:
        try:
            step = Step(event.get("Step"))
        except ValueError:
            raise RotationRequestInvalid(
                f"Step must be one of {[s.value for s in Step]}, got {event.get('Step')!r}"
            ) from None
        secret_id = event.get("SecretId") or default_secret_id
        token = event.get("ClientRequestToken")
        if not isinstance(secret_id, str) or not secret_id:
            raise RotationRequestInvalid("the event has no SecretId and DB_SECRET_ARN is not set")
        check_own_secret(secret_id, default_secret_id)
        if not isinstance(token, str) or not token:
            raise RotationRequestInvalid("the event has no ClientRequestToken")
        return cls(step, secret_id, token)


# Secrets Manager appends "-" and six characters to a secret's name in its full ARN.
_ARN_SUFFIX = re.compile(r"-[A-Za-z0-9]{6}")


def check_own_secret(secret_id: object, own_secret_arn: str | None) -> None:
    """Refuse a ``SecretId`` that is not the stack's ``DbSecretArn`` (:class:`RotationRequestInvalid`).

    ``DbSecretArn`` is a full ARN (the template's pattern requires Secrets Manager's six-character
    suffix); the secret's name, which is that ARN's name without the suffix, is accepted too
    (moto's rotation sends it): in this account and region, it names this secret and no other.
    Without ``DB_SECRET_ARN`` (development only) there is nothing to compare with."""
    if not own_secret_arn:
        return
    name = own_secret_arn.partition(":secret:")[2]
    if _ARN_SUFFIX.fullmatch(name[-7:]):
        name = name[:-7]
    if not isinstance(secret_id, str) or secret_id not in {own_secret_arn, name}:
        raise RotationRequestInvalid("SecretId is not this stack's database secret (DbSecretArn)")


@dataclass(frozen=True)
class StepResult:
    step: Step
    secret_arn: str
    token: str
    outcome: str
    strategy: Strategy

    def to_json(self) -> dict[str, str]:
        return {
            "step": self.step.value,
            "secret_arn": self.secret_arn,
            "token": self.token,
            "outcome": self.outcome,
            "strategy": self.strategy.value,
        }
