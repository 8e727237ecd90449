"""The values of a verification run: what triggered it and what asking for one decided (the
settings it runs with are in :mod:`hyperpod_ha.runs.settings`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Outcome = Literal["started", "joined", "duplicate"]


@dataclass(frozen=True)
class Trigger:
    """What asked for a verification: an SNS message, an EventBridge event, the watchdog or an
    operator. ``time`` is the trigger's own time (ISO 8601 UTC, or "" for the run's start): the
    run checks until SlurmctldTimeout plus a margin has passed since then."""

    source: Literal["sns", "eventbridge", "watchdog", "operator"]
    id: str
    summary: Mapping[str, Any] = field(default_factory=dict)
    time: str = ""

    @property
    def key(self) -> str:
        return f"{self.source}:{self.id}"


@dataclass(frozen=True)
class RunDecision:
    outcome: Outcome
    execution_arn: str
    lease_id: str
