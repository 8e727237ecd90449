"""FailoverDrillFunction's settings, read once from the environment the template gives it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

from hyperpod_ha.controllers.settings import DEFAULT_TRANSPORT
from hyperpod_ha.environment import Environment, Settings, integer, text
from hyperpod_ha.incidents import IncidentSettings
from hyperpod_ha.runs.models import RunSettings

# The template's value; LEASE_SECONDS is the verification runs' default.
DEFAULT_COMMAND_DEADLINE_SECONDS = 60


@dataclass(frozen=True)
class DrillSettings(Settings):
    state_table: str
    # Checked by the transports' registry (runner_for), which knows the names; the plan step
    # refuses a transport that cannot run the drill's Session documents.
    command_transport: str
    takeover_document: str
    jobs_document: str
    accounting_document: str
    command_deadline_seconds: float
    lease_seconds: int
    incidents: IncidentSettings  # its topic also gets the drill's summary

    @classmethod
    def read(cls, env: Environment) -> Self:
        return cls(
            state_table=text(env, "STATE_TABLE"),
            command_transport=text(env, "COMMAND_TRANSPORT", DEFAULT_TRANSPORT),
            takeover_document=text(env, "TAKEOVER_DOCUMENT"),
            jobs_document=text(env, "JOBS_DOCUMENT"),
            accounting_document=text(env, "ACCOUNTING_DOCUMENT"),
            command_deadline_seconds=float(
                integer(env, "DRILL_COMMAND_DEADLINE_SECONDS", DEFAULT_COMMAND_DEADLINE_SECONDS, minimum=1)
            ),
            lease_seconds=integer(env, "LEASE_SECONDS", RunSettings.lease_seconds, minimum=1),
            incidents=IncidentSettings.from_environment(env),
        )
