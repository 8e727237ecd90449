"""What asked for a run: an SNS message (HyperPod's ON/OFF notification or Slurm's own
trigger), an EventBridge event, the watchdog, an operator or a roll-out. One value for every
use: the run's input carries it (``trigger``), the lease takes its id from it, and messages say
it (``triggered by ...``).

``time`` is the trigger's own time as the run's input carries it (ISO 8601 UTC, ``""`` when it
said none: the run's start counts then); :attr:`Trigger.at` is the same moment in epoch
seconds."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from hyperpod_ha.human_time import ago_at, parse_utc, utc_text
from hyperpod_ha.request_fields import MAX_ID_CHARS, bounded_text

# Slurm's own trigger (``strigger``) on a controller, told on the failover topic
# (hyperpod_ha.slurm.triggers); its summary's ``event`` is the Slurm event.
SLURM_TRIGGER: Final = "slurm-trigger"
# How a message names each source; another source (outside text) is named as it is.
_SOURCES: Final = {
    "sns": "the controller status notification (SNS message {id})",
    SLURM_TRIGGER: "Slurm's trigger {event} (SNS message {id})",
    "eventbridge": "a HyperPod event (EventBridge event {id})",
    "watchdog": "the watchdog's scheduled check ({id})",
    "operator": "an operator's request ({id})",
    "rotation": "the roll-out of the rotated database secret ({id})",
}
SOURCE_CHARS: Final = 32


@dataclass(frozen=True)
class Trigger:
    source: str  # sns, slurm-trigger, eventbridge, watchdog, operator, rotation
    id: str
    summary: Mapping[str, Any] = field(default_factory=dict)
    time: str = ""

    @property
    def key(self) -> str:
        """The same for every delivery of one trigger (the lease's id is made from it)."""
        return f"{self.source}:{self.id}"

    @property
    def at(self) -> float | None:
        """The trigger's own time in epoch seconds; None when it said none."""
        return parse_utc(self.time)

    @classmethod
    def from_json(cls, value: object) -> Trigger | None:
        """A run input's ``trigger``, each field bounded (its summary is the run's, not read
        back, but for the Slurm event a Slurm trigger names: one of ours, so a message can say
        it); ``None`` when there is none (a direct request)."""
        if not isinstance(value, Mapping):
            return None
        source = _text(value.get("source"), SOURCE_CHARS) or "unknown"
        summary = value.get("summary")
        event = (
            _slurm_event(summary.get("event"))
            if source == SLURM_TRIGGER and isinstance(summary, Mapping)
            else None
        )
        return cls(
            source=source,
            id=_text(value.get("id"), MAX_ID_CHARS) or "",
            summary={"event": event} if event else {},
            time=utc_text(value.get("time")),
        )

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "id": self.id, "summary": dict(self.summary), "time": self.time}

    def describe(self, now: float, started_at: float | None = None) -> str:
        """``the watchdog's scheduled check (tick-1), 3 min ago (2026-12-01 10:01 UTC)``: when
        the trigger said no time, the run's ``started_at``."""
        ident = self.id or "no id"
        # Only our own templates are formatted: the source is outside text (braces and all).
        template = _SOURCES.get(self.source)
        what = template.format(id=ident, event=self._event()) if template else f"{self.source} ({ident})"
        when = self.at if self.at is not None else started_at
        return f"{what}, {ago_at(when, now)}" if when is not None else what

    def _event(self) -> str:
        """The Slurm event a Slurm trigger names ("" for any other source)."""
        if self.source != SLURM_TRIGGER:
            return ""
        return _slurm_event(self.summary.get("event")) or "(event not named)"


def _slurm_event(value: object) -> str | None:
    """``value`` when it is the name of a trigger the stack installs: never outside text in a
    message. Imported here, not at the top: only a Slurm trigger's run needs Slurm's names, and
    the ingestion's INIT stays without the slurm package."""
    from hyperpod_ha.slurm.triggers import EVENTS

    return value if isinstance(value, str) and value in EVENTS else None


def _text(value: object, limit: int) -> str | None:
    return bounded_text(value.strip(), limit) if isinstance(value, str) and value.strip() else None
