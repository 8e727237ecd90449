"""What the verdict is judged by: :class:`VerdictPolicy`, read from the environment by
EvaluateVerdictFunction (:mod:`hyperpod_ha.verdict.function`); the watchdog judges by its
defaults."""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Annotated, Final

from hyperpod_ha.environment import OnOff, Settings, Variable
from hyperpod_ha.verdict.models import DEFAULT_SLURMCTLD_TIMEOUT

# A file system type as the kernel names it (lustre, nfs4, fuse.sshfs, ...).
_FSTYPE_CHARACTERS: Final = frozenset(string.ascii_letters + string.digits + "._-")


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
    """What the verdict is judged by (a part of EvaluateVerdictFunction's settings)."""

    # A beat older than SlurmctldTimeout plus this is stale: by then a backup would take over.
    heartbeat_slack_seconds: int = 5
    default_slurmctld_timeout: int = DEFAULT_SLURMCTLD_TIMEOUT
    # File system types StateSaveLocation must be on (e.g. {"lustre"}); empty: no expectation.
    expected_state_fstypes: Annotated[frozenset[str], _FileSystemTypes("EXPECTED_STATE_FSTYPES", "")] = (
        frozenset()
    )
    # SlurmTriggers: the stack installs Slurm's triggers, so a missing one is drift. Off (no
    # expectation) unless the template says on, as for the file system types.
    slurm_triggers: Annotated[bool, OnOff("SLURM_TRIGGERS", "off")] = False
