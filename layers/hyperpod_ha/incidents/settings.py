"""The incidents' settings: where to notify and whether to use Incident Manager
(:class:`IncidentSettings`, also read by the functions that open incidents themselves), and
IncidentFunction's one settings object (:class:`IncidentFunctionSettings`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated

from hyperpod_ha.environment import OptionalText, Settings, Text


@dataclass(frozen=True, kw_only=True)
class _OptionalArn(OptionalText):
    """An ARN of ``service`` or ``None`` when the template leaves it empty."""

    service: str

    def parse(self, raw: str) -> str | None:
        value = super().parse(raw)
        if value and not re.match(rf"^arn:aws[a-z-]*:{re.escape(self.service)}:", value):
            raise self.refused(f"is not an ARN of {self.service}")
        return value


@dataclass(frozen=True)
class IncidentSettings(Settings):
    # Lambda sets AWS_REGION; tests and local runs may set only AWS_DEFAULT_REGION.
    region: Annotated[str, Text("AWS_REGION", Text("AWS_DEFAULT_REGION", "us-east-1"))]
    topic_arn: Annotated[str | None, _OptionalArn("NOTIFICATION_TOPIC_ARN", service="sns")] = None
    # Incident Manager is used only when a response plan is given.
    response_plan_arn: Annotated[
        str | None, _OptionalArn("INCIDENT_RESPONSE_PLAN_ARN", service="ssm-incidents")
    ] = None


@dataclass(frozen=True)
class IncidentFunctionSettings(Settings):
    incidents: IncidentSettings
    # Without it a retried resolve may repeat the "verified" message.
    idempotency_table: Annotated[str | None, OptionalText("IDEMPOTENCY_TABLE")] = None
    # Where the run's verdict is kept for `hyperpod-ha status`; not kept without it.
    state_table: Annotated[str | None, OptionalText("STATE_TABLE")] = None
    # The stack's cluster: a request naming another is refused ("" only in settings made by hand).
    cluster: Annotated[str, Text("CLUSTER_NAME", "")] = ""
