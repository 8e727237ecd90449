"""The watchdog's tick: one scheduled check, as EventBridge Scheduler delivers it, and its result."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from hyperpod_ha.errors import InputRejected
from hyperpod_ha.human_time import utc_text
from hyperpod_ha.verdict import Verdict

# The schedule's Input names its source; Scheduler fills in the context attributes.
TICK_SOURCE: Final = "hyperpod-ha.watchdog"
_TICK_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")


class TickRejected(InputRejected):
    """The invocation is not a watchdog tick from this stack's schedule. Safe to log."""


@dataclass(frozen=True)
class Tick:
    """One scheduled check: Scheduler's execution id (kept across its retries) and time."""

    id: str
    scheduled_time: str


def parse_tick(event: object) -> Tick:
    if not isinstance(event, Mapping):
        raise TickRejected("the tick is not a JSON object")
    if event.get("source") != TICK_SOURCE:
        raise TickRejected(f"source is not {TICK_SOURCE!r}")
    tick_id = event.get("tick_id")
    if not isinstance(tick_id, str) or not _TICK_ID.match(tick_id) or tick_id.startswith("<"):
        raise TickRejected("tick_id is missing or not an id (is the schedule's Input templated?)")
    scheduled = utc_text(event.get("scheduled_time"))
    if not scheduled:
        raise TickRejected("scheduled_time is missing or not an ISO 8601 time")
    return Tick(tick_id, scheduled)


@dataclass(frozen=True)
class TickResult:
    outcome: str  # verified, started, joined, duplicate
    verdict: Verdict
    controllers: int
    execution_arn: str | None = None
    recovery: bool = False  # verified again after a failure the watchdog found
    # What the tick did about redundancy (watchdog.redundancy_loss.Step); None: not weighed.
    redundancy_step: str | None = None
    # Since when each controller SSM could not reach has been unreachable (instance id: epoch s).
    unreachable: Mapping[str, int] = field(default_factory=dict)
    restore: bool = False  # verified, and the run is for a restore (watchdog.restore_start)
    # Why a verified tick with a standby not ready started a run for a restore, or why not.
    restore_reason: str | None = None
    # The early warnings, every controller's figures and each kind's step (early_warning.watch).
    early_warnings: Mapping[str, Any] | None = None
    # What the tick did about the Slurm triggers (watchdog.trigger_install.TriggerStep); None: off.
    slurm_triggers: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "recovery": self.recovery,
            "verdict": self.verdict.name.value,
            "reasons": self.verdict.texts,  # every one (the verdict bounds them)
            "reason_codes": self.verdict.codes,
            "controllers": self.controllers,
            "execution_arn": self.execution_arn,
            "redundancy": self.verdict.redundancy,
            "standbys": list(self.verdict.standbys),
            "not_ready": dict(self.verdict.not_ready),
            "redundancy_step": self.redundancy_step,
            "unreachable": dict(self.unreachable),
            "restore": self.restore,
            "restore_reason": self.restore_reason,
            "warnings": list((self.early_warnings or {}).get("warnings", [])),
            "figures": list((self.early_warnings or {}).get("figures", [])),
            "warning_steps": dict((self.early_warnings or {}).get("steps", {})),
            "slurm_triggers": dict(self.slurm_triggers) if self.slurm_triggers is not None else None,
        }
