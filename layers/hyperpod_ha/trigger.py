"""What asked for a run: an SNS message, an EventBridge event, the watchdog, an operator or a
roll-out. One value for every use: the run's input carries it (``trigger``), the lease takes its
id from it, and messages say it (``triggered by ...``).

``time`` is the trigger's own time as the run's input carries it (ISO 8601 UTC, ``""`` when it
said none: the run's start counts then); :attr:`Trigger.at` is the same moment in epoch
seconds."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from hyperpod_ha.human_time import ago_at, parse_utc, utc_text
from hyperpod_ha.request_fields import MAX_ID_CHARS, bounded_text

# How a message names each source; another source (outside text) is named as it is.
_SOURCES: Final = {
    "sns": "the controller status notification (SNS message {id})",
    "eventbridge": "a HyperPod event (EventBridge event {id})",
    "watchdog": "the watchdog's scheduled check ({id})",
    "operator": "an operator's request ({id})",
    "rotation": "the roll-out of the rotated database secret ({id})",
}
SOURCE_CHARS: Final = 32


@dataclass(frozen=True)
class Trigger:
    source: str  # sns, eventbridge, watchdog, operator, rotation
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
        back); ``None`` when there is none (a direct request)."""
        if not isinstance(value, Mapping):
            return None
        return cls(
            source=_text(value.get("source"), SOURCE_CHARS) or "unknown",
            id=_text(value.get("id"), MAX_ID_CHARS) or "",
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
        what = template.format(id=ident) if template else f"{self.source} ({ident})"
        when = self.at if self.at is not None else started_at
        return f"{what}, {ago_at(when, now)}" if when is not None else what


def _text(value: object, limit: int) -> str | None:
    return bounded_text(value.strip(), limit) if isinstance(value, str) and value.strip() else None
