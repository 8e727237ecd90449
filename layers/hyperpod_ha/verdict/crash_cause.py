"""Crash loops tied to the configuration change that caused them.

HyperPod's cluster agent rewrites slurm.conf and the topology files; a setting slurmctld cannot
start with (a topology plugin without its file) makes every controller that starts die the same
way. A controller whose slurmctld does not run, that last logged a settled role (primary or
standby) before one of its configuration files changed, and whose last death (its ``fatal:``
line, or systemd's "killed by a signal") came after that change, within
:data:`CHANGE_WINDOW_SECONDS` of it, died on that change: the verdict names the change and its
time, and the restore does not start slurmctld into it (:func:`config_crash`). A controller that
took its role after the change and died later died of something else."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from hyperpod_ha.controllers.models import ControllerReport
from hyperpod_ha.human_time import ago, duration
from hyperpod_ha.verdict.observation import Observation, ObservedController

# A death this long after the change is not taken as its effect.
CHANGE_WINDOW_SECONDS: Final = 3600


@dataclass(frozen=True)
class ConfigCrash:
    """A controller's death after a configuration change: what changed, when, how it died."""

    controller: str
    file: str
    changed_age: int  # seconds since the change
    died_age: int  # seconds since the death
    how: str  # the fatal line, or "killed by signal 11/SEGV"


def config_crash(controller: ObservedController) -> ConfigCrash | None:
    report = controller.checked
    if report is None or report.slurmctld.running is True:
        return None
    death = _death(report)
    if death is None:
        return None
    died_age, how = death
    settled = report.role.settled_age_seconds
    changes = [
        (f.age_seconds, f.name)
        for f in report.conf_change.files
        if f.exists
        and f.age_seconds is not None
        and died_age <= f.age_seconds <= died_age + CHANGE_WINDOW_SECONDS
        and (settled is None or f.age_seconds < settled)
    ]
    if not changes:
        return None
    changed_age, name = min(changes)  # the change closest before the death
    return ConfigCrash(controller.key, name, changed_age, died_age, how)


def _death(report: ControllerReport) -> tuple[int, str] | None:
    """The newest death: a fatal line logged after the last role line, or a kill by a signal."""
    found: list[tuple[int, str]] = []
    if report.role.fatal_message and report.role.fatal_age_seconds is not None:
        found.append((report.role.fatal_age_seconds, f"fatal: {report.role.fatal_message}"))
    change = report.conf_change
    if change.signal_status and change.signal_age_seconds is not None:
        found.append((change.signal_age_seconds, f"killed by signal {change.signal_status}"))
    return min(found) if found else None


def config_crash_reasons(seen: Observation) -> list[str]:
    """One reason per changed file that controllers died after: the change, its time, who, how."""
    crashes = [crash for c in seen.everyone if (crash := config_crash(c)) is not None]
    by_file: dict[str, list[ConfigCrash]] = {}
    for crash in crashes:
        by_file.setdefault(crash.file, []).append(crash)
    reasons = []
    for name, group in by_file.items():
        changed = max(c.changed_age for c in group)
        first = max(c.died_age for c in group)
        who = " and ".join(c.controller for c in group)
        before = duration(changed - first)
        reasons.append(f"{name} changed {ago(changed)}, {before} before {who} began to die: {group[0].how}")
        reasons.append(
            f"a restart dies the same way until {name} is fixed: look at what changed it "
            "(HyperPod's cluster agent, a lifecycle script)"
        )
    return reasons
