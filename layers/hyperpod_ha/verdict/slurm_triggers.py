"""Drift in the Slurm triggers the stack installs (``SlurmTriggers=on``; :mod:`hyperpod_ha.slurm_triggers`).

The active slurmctld holds the triggers (in StateSaveLocation: they survive a failover) and every
controller's ``strigger --get`` asks it, so the answer listing the most of ours is the cluster's;
none of ours missing and no answer at all say nothing. Each controller needs its own copy of the
program (slurmctld runs it where it is in control): a controller without one is drift once the
triggers are there (before that, the missing triggers say it, and one install mends both). With
``SlurmTriggers=off`` nothing here is drift. The watchdog's tick installs what is missing
(:mod:`hyperpod_ha.watchdog.trigger_install`)."""

from __future__ import annotations

from typing import Final

from hyperpod_ha.slurm import TRIGGER_PROGRAM_PATH
from hyperpod_ha.slurm.triggers import TRIGGER_EVENTS
from hyperpod_ha.verdict.observation import Observation
from hyperpod_ha.verdict.reasons import Reason, ReasonCode

INSTALLED_BY: Final = "the watchdog installs them (SlurmTriggersDocument, mode=install)"
_NAMES_BUDGET: Final = 110  # the reason stays within an excerpt's 240 characters
_BROKEN: Final = {"missing": "is missing", "not_executable": "is not executable"}


def trigger_problems(seen: Observation) -> list[Reason]:
    """Missing triggers (once for the cluster), then each controller without the program."""
    if not seen.policy.slurm_triggers:
        return []
    checked = [c for c in seen.everyone if c.checked is not None]
    counts = [
        (c.checked.slurm_triggers.missing_count, c.checked.slurm_triggers.missing)
        for c in checked
        if c.checked is not None and c.checked.slurm_triggers.missing_count is not None
    ]
    if not counts:
        return []
    count, names = min(counts, key=lambda found: found[0])
    problems = [Reason(ReasonCode.SLURM_TRIGGERS_MISSING, missing_text(count, names))] if count else []
    if count == len(TRIGGER_EVENTS):
        return problems
    for controller in checked:
        assert controller.checked is not None
        state = controller.checked.slurm_triggers.program_state
        if state in _BROKEN:
            key = controller.key
            text = (
                f"the Slurm trigger program {TRIGGER_PROGRAM_PATH} {_BROKEN[state]} on {key}: the triggers "
                f"publish nothing while {key} is in control; the watchdog installs it"
            )
            problems.append(Reason(ReasonCode.SLURM_TRIGGER_PROGRAM_MISSING, text))
    return problems


def missing_text(count: int, names: tuple[str, ...]) -> str:
    """``Slurm triggers missing (2 of 11): a, b: the watchdog installs them (...)``, the names cut
    to fit."""
    total = len(TRIGGER_EVENTS)
    if count == total:
        none = f"none of the {total} hyperpod-ha sets is there (strigger --get)"
        return f"Slurm triggers missing: {none}; {INSTALLED_BY}"
    shown: list[str] = []
    for name in names:
        if len(", ".join([*shown, name])) > _NAMES_BUDGET:
            break
        shown.append(name)
    listed = ", ".join(shown) + (f" and {count - len(shown)} more" if count > len(shown) else "")
    return f"Slurm triggers missing ({count} of {total}): {listed}; {INSTALLED_BY}"
