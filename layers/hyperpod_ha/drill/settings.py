"""FailoverDrillFunction's settings, read once from the environment the template gives it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from hyperpod_ha.controllers.settings import DEFAULT_TRANSPORT
from hyperpod_ha.environment import Integer, Number, Settings, Text
from hyperpod_ha.incidents import IncidentSettings
from hyperpod_ha.runs.settings import RunSettings

# The template's value; LEASE_SECONDS is the verification runs' default.
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
    lease_seconds: Annotated[int, Integer("LEASE_SECONDS", RunSettings.lease_seconds, minimum=1)]
    incidents: IncidentSettings  # its topic also gets the drill's summary
