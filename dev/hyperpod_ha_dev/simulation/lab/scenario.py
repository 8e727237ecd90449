"""What a lab scenario is: its fault, its trigger, what it expects."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

from hyperpod_ha_dev.simulation.engine import ScenarioResult
from hyperpod_ha_dev.simulation.lab.progress import (
    Drill,
)
from hyperpod_lab import Lab

# SlurmctldTimeout is 10 s in the lab: no settle wait, a check every 5 s and six checks in
# all, so a run that starts while a failover is still in progress sees it converge.
CONVERGING_PARAMETERS: Final = {"SettleSeconds": 0, "BackoffSeconds": 5, "MaxAttempts": 6}
# A fault that stays (both controllers down, slurmdbd stopped, ...) gives the same verdict
# at every check: two checks show that the run checked again, and keep the lab run short.
PERSISTENT_FAULT_PARAMETERS: Final = {"SettleSeconds": 0, "BackoffSeconds": 5, "MaxAttempts": 2}


Inject = Callable[[Drill], None]
Verify = Callable[[Drill, ScenarioResult], None]


@dataclass(frozen=True)
class LabScenario:
    name: str
    summary: str
    inject: Inject  # the fault (or the rotation) and the trigger the cluster would send
    expect_verdicts: frozenset[str]  # the incidents follow: one if not verified (LabScenarioResult)
    expect_label: str  # how the expectation reads in the timeline and JSON
    parameters: Mapping[str, int | str] = field(default_factory=lambda: dict(CONVERGING_PARAMETERS))
    precondition: Callable[[Lab], str] | None = None  # before the stack exists; says what it did
    verify: Verify | None = None  # after the workflow, before the repair
    measured: bool = False  # report the seconds from the fault to the verdict
    why: str = ""  # why this verdict is the right one, where that is not obvious
    controllers: int = 2  # the lab's controller group for this scenario
    min_slurm: str | None = None  # the oldest Slurm series that shows it (e.g. "24.11")
    # Where a Slurm release ends otherwise: series -> (verdicts, label, why).
    by_release: Mapping[str, tuple[frozenset[str], str, str]] = field(default_factory=dict)
    # The stack as deployed: the template's defaults under ``parameters`` (the restore's mode,
    # a shortened grace), never the quick run settings; ``make bench`` keeps ``parameters`` too.
    defaults: bool = False
    runs: int = 1  # verification runs in all (a restore that acted starts one of its own)
    # Incidents (OpsItems) in all, open or resolved; None: the runs' rule (one if not verified).
    incidents: int | None = None

    def on(self, series: str) -> LabScenario:
        """The scenario as it ends on ``series``."""
        if series not in self.by_release:
            return self
        verdicts, label, why = self.by_release[series]
        return dataclasses.replace(self, expect_verdicts=verdicts, expect_label=label, why=why)
