"""What asking for a verification run decided (what triggered it is a
:class:`hyperpod_ha.trigger.Trigger`; the settings it runs with are in
:mod:`hyperpod_ha.runs.settings`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Outcome = Literal["started", "joined", "duplicate"]


@dataclass(frozen=True)
class RunDecision:
    outcome: Outcome
    execution_arn: str
    lease_id: str
