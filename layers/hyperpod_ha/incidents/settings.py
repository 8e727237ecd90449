"""Where incidents go: the region, the topic to notify, whether to use Incident Manager, and how
often an open incident is reminded of (:class:`IncidentSettings`, a part of IncidentFunction's
settings, also read by the functions that open incidents themselves)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated

from hyperpod_ha.environment import Integer, OptionalText, Settings, Text

# A week: a reminder less often than that is none (template.yaml's MaxValue is the same).
MAX_REMINDER_MINUTES = 10_080


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
    # "Still open" reminders: at most one per incident in this many seconds (the template's
    # ReminderMinutes; 0: none), kept in the state table (none without one).
    reminder_seconds: Annotated[
        int, Integer("REMINDER_MINUTES", 60, minimum=0, maximum=MAX_REMINDER_MINUTES, scale=60)
    ] = 3600
    state_table: Annotated[str | None, OptionalText("STATE_TABLE")] = None
    # The template's AWS::StackName (Globals): the commands a message prints name it.
    stack_name: Annotated[str | None, OptionalText("STACK_NAME")] = None
