"""A HyperPod cluster event's ``EventDetails.EventDetails.EventMetadata`` (one key per kind of
event, as botocore's ``EventMetadata`` union), as typed values: slurmdbd's health
(``SlurmHealth``) and the external accounting database's configuration change
(``DatabaseConfiguration``). The other keys (``Cluster``, ``InstanceGroup``,
``InstanceGroupScaling``, ``Instance``) and any unknown key are accepted and ignored.

An EventBridge envelope can carry null or partial metadata; :attr:`EventMetadata.complete`
says so and the triage reads the record again (``DescribeClusterEvent``). Every text is
bounded; a value of the wrong type is an :class:`EventRejected`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hyperpod_ha.ingestion.hyperpod_events import EventRejected
from hyperpod_ha.redaction import scrub_text

SLURM_HEALTH = "SlurmHealth"
DATABASE_CONFIGURATION = "DatabaseConfiguration"
KNOWN_SLURM_HEALTH_STATUSES = frozenset({"Healthy", "Unhealthy"})
KNOWN_SLURM_HEALTH_REASONS = frozenset({"DaemonDown", "DaemonDisabled", "DbUnreachable"})
KNOWN_ROLLBACK_STATUSES = frozenset({"NotApplicable", "Reverted", "RevertFailed"})
# Enum values are short words; a longer one is not HyperPod's.
MAX_VALUE_CHARS = 64
# Advisory and FailureMessage are free text copied into notices and OpsItems.
MAX_MESSAGE_CHARS = 1000


@dataclass(frozen=True)
class SlurmHealth:
    component: str  # "Slurmdbd"
    status: str  # "Healthy" | "Unhealthy" (others kept as they are)
    reason: str  # "DaemonDown" | "DaemonDisabled" | "DbUnreachable"; "" when healthy

    @property
    def unhealthy(self) -> bool:
        return self.status == "Unhealthy"

    @property
    def healthy(self) -> bool:
        return self.status == "Healthy"

    def describe(self) -> str:
        """HyperPod's words, as they appear among a verdict's reasons."""
        because = f" ({self.reason})" if self.reason else ""
        return f"HyperPod reported {self.component.lower() or 'slurm'} {self.status}{because}"


@dataclass(frozen=True)
class DatabaseConfiguration:
    rollback_status: str  # "NotApplicable" | "Reverted" | "RevertFailed"
    advisory: str  # bounded, secrets scrubbed
    failure_message: str  # bounded, secrets scrubbed

    @property
    def revert_failed(self) -> bool:
        return self.rollback_status == "RevertFailed"


@dataclass(frozen=True)
class EventMetadata:
    slurm_health: SlurmHealth | None = None
    database: DatabaseConfiguration | None = None
    # False: null or partial in the envelope; the record is to be read again.
    complete: bool = True

    @property
    def relevant(self) -> bool:
        """Carries a kind this project acts on."""
        return self.slurm_health is not None or self.database is not None


INCOMPLETE = EventMetadata(complete=False)


def metadata_of(details: Mapping[str, Any]) -> EventMetadata | None:
    """The metadata of a cluster event's ``EventDetails``; ``None`` when the event has none at
    all (the form without metadata), :data:`INCOMPLETE`-like when it is null or partial."""
    if "EventDetails" not in details:
        return None
    inner = details["EventDetails"]
    if inner is None:
        return INCOMPLETE
    if not isinstance(inner, Mapping):
        raise EventRejected("EventDetails.EventDetails is not an object")
    return parse_event_metadata(inner.get("EventMetadata"))


def parse_event_metadata(raw: object) -> EventMetadata:
    """``EventMetadata`` (from the envelope or from ``DescribeClusterEvent``) as typed values."""
    if raw is None:
        return INCOMPLETE
    if not isinstance(raw, Mapping):
        raise EventRejected("EventMetadata is not an object")
    complete = True
    health = database = None
    if SLURM_HEALTH in raw:
        health = _slurm_health(raw[SLURM_HEALTH])
        complete = health is not None
    if DATABASE_CONFIGURATION in raw:
        database = _database(raw[DATABASE_CONFIGURATION])
        complete = complete and database is not None
    if not raw:  # an empty union: nothing said
        complete = False
    return EventMetadata(slurm_health=health, database=database, complete=complete)


def _slurm_health(raw: object) -> SlurmHealth | None:
    """``None`` when partial (null, or no Component or Status)."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise EventRejected("SlurmHealth is not an object")
    component = _value(raw, "Component", "SlurmHealth")
    status = _value(raw, "Status", "SlurmHealth")
    if not component or not status:
        return None
    return SlurmHealth(component, status, _value(raw, "Reason", "SlurmHealth"))


def _database(raw: object) -> DatabaseConfiguration | None:
    """``None`` when partial (null, or no RollbackStatus)."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise EventRejected("DatabaseConfiguration is not an object")
    status = _value(raw, "RollbackStatus", "DatabaseConfiguration")
    if not status:
        return None
    return DatabaseConfiguration(
        rollback_status=status,
        advisory=_message(raw, "Advisory"),
        failure_message=_message(raw, "FailureMessage"),
    )


def _value(container: Mapping[str, Any], key: str, where: str) -> str:
    value = container.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise EventRejected(f"{where}.{key} is not a string")
    if len(value) > MAX_VALUE_CHARS:
        raise EventRejected(f"{where}.{key} is longer than {MAX_VALUE_CHARS} characters")
    return value.strip()


def _message(container: Mapping[str, Any], key: str) -> str:
    value = container.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise EventRejected(f"DatabaseConfiguration.{key} is not a string")
    # Cut before scrubbing (the scrub is linear, but needs no more than is kept).
    text = scrub_text(value[: MAX_MESSAGE_CHARS * 2].strip())
    return text if len(text) <= MAX_MESSAGE_CHARS else text[: MAX_MESSAGE_CHARS - 3].rstrip() + "..."
