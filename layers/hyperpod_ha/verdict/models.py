"""The verdict's names and results, the policy it is judged by, and the next step of a run."""

from __future__ import annotations

import datetime as dt
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated, Any, Final, Literal

from hyperpod_ha.environment import Settings, Variable
from hyperpod_ha.errors import InputRejected


class VerdictName(StrEnum):
    """The verdicts (**contract**).

    * ``HEALTHY``: the configured primary is active and every standby answers.
    * ``FAILED_OVER``: a backup is active and serving, the configured primary is not active.
    * ``DEGRADED``: one controller is active and serves, but something the cluster needs is not
      right (slurmdbd does not answer, StateSaveLocation is not writable, a standby is missing,
      controllers cannot reach each other, ...).
    * ``SPLIT_BRAIN``: more than one controller acts as the active one.
    * ``DOWN``: no controller is active and reachable.
    * ``UNKNOWN``: no controller could be checked.
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

MAX_REASONS: Final = 24
MAX_REPORTS: Final = 32
# Slurm's default SlurmctldTimeout, used when no report says the configured one.
DEFAULT_SLURMCTLD_TIMEOUT: Final = 120
# A file system type as the kernel names it (lustre, nfs4, fuse.sshfs, ...).
_FSTYPE_CHARACTERS: Final = frozenset(string.ascii_letters + string.digits + "._-")


class VerdictInputError(InputRejected):
    """The evaluation's input is not a list of reports. The reason is safe to log."""


class ConvergenceInputError(InputRejected):
    """The attempt counters, times or durations are not what the workflow sends."""


@dataclass(frozen=True)
class _FileSystemTypes(Variable[frozenset[str]]):
    """Comma-separated file system types; empty: no expectation."""

    def parse(self, raw: str) -> frozenset[str]:
        fstypes = frozenset(kind.strip() for kind in raw.split(",") if kind.strip())
        if any(not set(kind) <= _FSTYPE_CHARACTERS for kind in fstypes):
            raise self.refused("is not a comma-separated list of file system types")
        return fstypes


@dataclass(frozen=True)
class VerdictPolicy(Settings):
    """What the verdict is judged by; EvaluateVerdictFunction's settings object."""

    # A beat older than SlurmctldTimeout plus this is stale: by then a backup would take over.
    heartbeat_slack_seconds: int = 5
    default_slurmctld_timeout: int = DEFAULT_SLURMCTLD_TIMEOUT
    # File system types StateSaveLocation must be on (e.g. {"lustre"}); empty: no expectation.
    expected_state_fstypes: Annotated[frozenset[str], _FileSystemTypes("EXPECTED_STATE_FSTYPES", "")] = (
        frozenset()
    )


@dataclass(frozen=True)
class Verdict:
    name: VerdictName
    reasons: tuple[str, ...]
    active_controller: str | None
    configured_primary: str | None
    evidence: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    attempt: int | None = None

    @property
    def verified(self) -> bool:
        return self.name in VERIFIED

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.name.value,
            "verified": self.verified,
            "reasons": list(self.reasons),
            "active_controller": self.active_controller,
            "configured_primary": self.configured_primary,
            "evidence": {key: dict(value) for key, value in self.evidence.items()},
            "attempt": self.attempt,
        }


Next = Literal["verified", "check-again", "not-verified"]


@dataclass(frozen=True)
class Step:
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
