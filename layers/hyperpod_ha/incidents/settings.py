"""The incidents' settings: where to notify and whether to use Incident Manager
(:class:`IncidentSettings`, also read by the functions that open incidents themselves), and
IncidentFunction's one settings object (:class:`IncidentFunctionSettings`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Self

from hyperpod_ha.environment import Environment, Settings, optional, text
from hyperpod_ha.errors import ConfigurationError


def _optional_arn(env: Environment, name: str, service: str) -> str | None:
    """An ARN of ``service`` or ``None`` when the template leaves it empty."""
    value = optional(env, name)
    if value and not re.match(rf"^arn:aws[a-z-]*:{re.escape(service)}:", value):
        raise ConfigurationError(f"environment variable {name} is not an ARN of {service}")
    return value


@dataclass(frozen=True)
class IncidentSettings(Settings):
    region: str
    topic_arn: str | None = None
    # Incident Manager is used only when a response plan is given.
    response_plan_arn: str | None = None

    @classmethod
    def read(cls, env: Environment) -> Self:
        return cls(
            region=text(env, "AWS_REGION", text(env, "AWS_DEFAULT_REGION", "us-east-1")),
            topic_arn=_optional_arn(env, "NOTIFICATION_TOPIC_ARN", "sns"),
            response_plan_arn=_optional_arn(env, "INCIDENT_RESPONSE_PLAN_ARN", "ssm-incidents"),
        )


@dataclass(frozen=True)
class IncidentFunctionSettings(Settings):
    incidents: IncidentSettings
    # Without it a retried resolve may repeat the "verified" message.
    idempotency_table: str | None = None
    # Where the run's verdict is kept for `hyperpod-ha status`; not kept without it.
    state_table: str | None = None

    @classmethod
    def read(cls, env: Environment) -> Self:
        return cls(
            incidents=IncidentSettings.from_environment(env),
            idempotency_table=optional(env, "IDEMPOTENCY_TABLE"),
            state_table=optional(env, "STATE_TABLE"),
        )
