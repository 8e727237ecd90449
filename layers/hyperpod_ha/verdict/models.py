"""The verdict's names and results, and the next step of a run."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Final, Literal

from hyperpod_ha.errors import InputRejected
from hyperpod_ha.verdict.reasons import Reason, codes, texts


class VerdictName(StrEnum):
    """The verdicts (**contract**).

    * ``HEALTHY``: the configured primary is active and serves.
    * ``FAILED_OVER``: a backup is active and serving, the configured primary is not active.
    * ``DEGRADED``: one controller is active and serves, but something the cluster needs is not
      right (slurmdbd does not answer, StateSaveLocation is not writable, a standby would refuse
      to take over, controllers cannot reach each other, drift, ...).
    * ``SPLIT_BRAIN``: more than one controller acts as the active one.
    * ``DOWN``: no controller is active and reachable.
    * ``UNKNOWN``: no controller could be checked.

    How many standbys are left (a dead or stopped standby) is not the verdict's: it is the
    verdict's ``redundancy`` (:mod:`hyperpod_ha.verdict.redundancy`).
    """

    HEALTHY = "HEALTHY"
    FAILED_OVER = "FAILED_OVER"
    DEGRADED = "DEGRADED"
    SPLIT_BRAIN = "SPLIT_BRAIN"
    DOWN = "DOWN"
    UNKNOWN = "UNKNOWN"


HEALTHY: Final = VerdictName.HEALTHY
FAILED_OVER: Final = VerdictName.FAILED_OVER
DEGRADED: Final = VerdictName.DEGRADED
SPLIT_BRAIN: Final = VerdictName.SPLIT_BRAIN
DOWN: Final = VerdictName.DOWN
UNKNOWN: Final = VerdictName.UNKNOWN
# Also matches the names as plain strings (the workflow's): a StrEnum member is its value.
VERIFIED: Final = frozenset({HEALTHY, FAILED_OVER})
# The dashboard's current verdict, the metric ``VerdictCode`` (**contract**: the dashboard's
# legend and any alarm on it read these numbers). Higher is worse, so a period's Maximum is its
# worst verdict and 2 or more is not verified.
VERDICT_CODES: Final[Mapping[VerdictName, int]] = MappingProxyType(
    {HEALTHY: 0, FAILED_OVER: 1, DEGRADED: 2, UNKNOWN: 3, DOWN: 4, SPLIT_BRAIN: 5}
)

MAX_REASONS: Final = 24
MAX_REPORTS: Final = 32
# Slurm's default SlurmctldTimeout, used when no report says the configured one.
DEFAULT_SLURMCTLD_TIMEOUT: Final = 120


class VerdictInputError(InputRejected):
    """The evaluation's input is not a list of reports. The reason is safe to log."""


class ConvergenceInputError(InputRejected):
    """The attempt counters, times or durations are not what the workflow sends."""


@dataclass(frozen=True)
class Verdict:
    name: VerdictName
    reasons: tuple[Reason, ...]
    active_controller: str | None
    configured_primary: str | None
    evidence: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    attempt: int | None = None
    # DEGRADED: its most severe problem's text, on whom (a message's headline); else None.
    problem: str | None = None
    # What is left for the next failover (verdict.redundancy): full, reduced, none or unknown,
    # the ready standbys' names, and why each other configured controller is not one.
    redundancy: str = "unknown"
    standbys: tuple[str, ...] = ()
    not_ready: Mapping[str, str] = field(default_factory=dict)
    # Known-bad releases the controllers run (hyperpod_ha.slurm.advisories), each with the
    # releases and controllers it applies to: told, never weighed.
    advisories: tuple[Mapping[str, Any], ...] = ()
    # Failed publishes of the ON/OFF program in view (verdict.missed_events): silent failovers.
    missed_notifications: int = 0

    @property
    def verified(self) -> bool:
        return self.name in VERIFIED

    @property
    def texts(self) -> list[str]:
        """The reasons as on-call reads them."""
        return texts(self.reasons)

    @property
    def codes(self) -> list[str]:
        """The reasons' codes, in the same order (what tests and checks match)."""
        return codes(self.reasons)

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.name.value,
            "verified": self.verified,
            "reasons": self.texts,
            "reason_codes": self.codes,
            "active_controller": self.active_controller,
            "configured_primary": self.configured_primary,
            "evidence": {key: dict(value) for key, value in self.evidence.items()},
            "attempt": self.attempt,
            "problem": self.problem,
            "redundancy": self.redundancy,
            "standbys": list(self.standbys),
            "not_ready": dict(self.not_ready),
            "advisories": [dict(row) for row in self.advisories],
            "missed_notifications": self.missed_notifications,
        }


Next = Literal["verified", "check-again", "not-verified", "wait-for-maintenance"]


@dataclass(frozen=True)
class NextStep:
    """What the run does after a verdict: ``next``, after ``wait_seconds`` when checking again.
    ``converged_by`` is when the cluster must have converged (trigger + timeout + margin)."""

    next: Next
    wait_seconds: int
    converged_by: dt.datetime | None
    slurmctld_timeout: int

    def to_json(self) -> dict[str, object]:
        converged_by = self.converged_by.isoformat().replace("+00:00", "Z") if self.converged_by else None
        return {
            "next": self.next,
            "wait_seconds": self.wait_seconds,
            "converged_by": converged_by,
            "slurmctld_timeout": self.slurmctld_timeout,
        }
