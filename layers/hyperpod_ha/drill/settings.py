"""FailoverDrillFunction's settings, read once from the environment the template gives it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from hyperpod_ha.controllers.settings import DEFAULT_TRANSPORT
from hyperpod_ha.environment import Number, Settings, Text
from hyperpod_ha.incidents import IncidentSettings
from hyperpod_ha.lease import LeaseSeconds

# The template's value.
DEFAULT_COMMAND_DEADLINE_SECONDS = 60


@dataclass(frozen=True)
class DrillSettings(Settings):
    state_table: Annotated[str, Text("STATE_TABLE")]
    # Checked by the transports' registry (runner_for), which knows the names; the plan step
    # refuses a transport that cannot run the drill's Session documents.
    command_transport: Annotated[str, Text("COMMAND_TRANSPORT", DEFAULT_TRANSPORT)]
    takeover_document: Annotated[str, Text("TAKEOVER_DOCUMENT")]
    jobs_document: Annotated[str, Text("JOBS_DOCUMENT")]
    accounting_document: Annotated[str, Text("ACCOUNTING_DOCUMENT")]
    command_deadline_seconds: Annotated[
        float,
        Number("DRILL_COMMAND_DEADLINE_SECONDS", DEFAULT_COMMAND_DEADLINE_SECONDS, minimum=1, whole=True),
    ]
    lease_seconds: LeaseSeconds  # the same lease, and setting, as the verification runs'
    incidents: IncidentSettings  # its topic also gets the drill's summary
