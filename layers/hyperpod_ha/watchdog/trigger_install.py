"""A tick that finds the Slurm triggers missing installs them (``SlurmTriggers=on``).

The probe tells, from every controller, which of the stack's triggers the active slurmctld lacks
and whether this controller has the trigger program (:mod:`hyperpod_ha.slurm.strigger_get`).
When triggers are missing, the tick runs ``SlurmTriggersDocument`` (``mode=install``) on the active
controller first (it writes the program there and sets what is missing, re-checking with
``strigger --get`` before it sets), then, once that completed, on every other checked controller
that lacks the program (they find every trigger there and only write it). A controller that only
lacks the program gets the same. The first tick after a deploy so installs them. Nothing is run
while the operator's silence is in force or a drill, a restore or a roll-out holds the cluster's
lease (as :mod:`.restore_start` weighs them), nor without an active controller (``strigger
--set`` would reach none). A failed install never stops the tick: it is logged, counted
(``SlurmTriggerInstallsFailed``) and tried again at the next tick.

What the install says it left (every event set, the program in place) stands in for the probe's
evidence of those controllers, and the tick's verdict is judged again from it: a deploy's missing
triggers, mended by the tick that found them, start no verification run and open no incident.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Final, Literal

from hyperpod_ha.acting.node_commands import NodeDocuments
from hyperpod_ha.commands import CommandRunner
from hyperpod_ha.controllers.models import ControllerReport
from hyperpod_ha.errors import HyperpodHaError
from hyperpod_ha.lease import Lease
from hyperpod_ha.slurm_triggers.node import TriggersResult, triggers_parameters, triggers_result
from hyperpod_ha.verdict import Verdict, VerdictPolicy
from hyperpod_ha.verdict.observation import observe
from hyperpod_ha.watchdog.restore_start import holds

# The script bounds its own calls (about 30 s at worst: scontrol and strigger --get 5 s each, no
# strigger --set started after 15 s, each 5 s); a session's start comes on top.
INSTALL_DEADLINE_SECONDS: Final = 35.0
MAX_PARALLEL_INSTALLS: Final = 4
BROKEN_PROGRAM: Final = frozenset({"missing", "not_executable"})

Outcome = Literal["nothing", "skipped", "installed", "failed"]


class TriggerInstallFailed(HyperpodHaError):
    """The install document could not run to its end on a controller. The reason is safe to log."""


@dataclass(frozen=True)
class InstallPlan:
    """Where the install runs (each controller by the verdict's name for it), in order (the active
    controller first when triggers are missing), and why (or why not)."""

    targets: tuple[tuple[str, ControllerReport], ...]
    why: str
    triggers_missing: bool = False


def _needs_program(report: ControllerReport, topic_arn: str) -> bool:
    found = report.slurm_triggers
    other_topic = found.program_topic is not None and found.program_topic != topic_arn
    return found.program_state in BROKEN_PROGRAM or other_topic


def plan_install(
    reports: Sequence[ControllerReport], verdict: Verdict, topic_arn: str, policy: VerdictPolicy
) -> InstallPlan:
    """Pure: from one check of every controller to where the install runs."""
    checked = [(c.key, c.checked) for c in observe(reports, policy).everyone if c.checked is not None]
    counts = [
        r.slurm_triggers.missing_count for _, r in checked if r.slurm_triggers.missing_count is not None
    ]
    missing = min(counts) if counts else 0
    lacking = [(key, report) for key, report in checked if _needs_program(report, topic_arn)]
    if not missing:
        if not lacking:
            return InstallPlan((), "every Slurm trigger and program is there (or not known)")
        names = ", ".join(key for key, _ in lacking)
        return InstallPlan(tuple(lacking), f"the Slurm trigger program is missing or out of date on {names}")
    active = next(((key, r) for key, r in checked if key == verdict.active_controller), None)
    if active is None:
        why = f"{missing} Slurm trigger(s) missing, but no controller is active (strigger --set reaches none)"
        return InstallPlan((), why, triggers_missing=True)
    others = tuple((key, report) for key, report in lacking if key != active[0])
    return InstallPlan((active, *others), f"{missing} Slurm trigger(s) missing", triggers_missing=True)


@dataclass(frozen=True)
class TriggerStep:
    """What the tick did about the Slurm triggers, for its result and its log line."""

    outcome: Outcome
    reason: str
    results: Mapping[str, Mapping[str, object]] = field(default_factory=dict)  # controller -> summary
    installed: int = 0  # triggers set by this tick
    # The reports with what the install left in place of the probe's evidence (None: unchanged).
    mended: tuple[ControllerReport, ...] | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "outcome": self.outcome,
            "reason": self.reason,
            "installed": self.installed,
            "controllers": dict(self.results),
        }


@dataclass(frozen=True)
class TriggerInstall:
    """The stack's triggers' document run through the watchdog's command transport."""

    runner: CommandRunner
    document: str
    topic_arn: str
    lease: Callable[[], Lease | None]
    silenced: Callable[[], str | None] = lambda: None
    deadline_seconds: float = INSTALL_DEADLINE_SECONDS

    def check(
        self, verdict: Verdict, reports: Sequence[ControllerReport], now: float, policy: VerdictPolicy
    ) -> TriggerStep:
        plan = plan_install(reports, verdict, self.topic_arn, policy)
        if not plan.targets:
            return TriggerStep("nothing", plan.why)
        silence = self.silenced()
        if silence is not None:
            return TriggerStep("skipped", f"{plan.why}; not installed: {silence}")
        holder = holds(self.lease(), now).holder
        if holder is not None:
            return TriggerStep("skipped", f"{plan.why}; not installed while {holder} holds the cluster")
        (first, report), *others = plan.targets
        done = {first: self._install(report)}
        # The others only once the first completed: two installs that both find a trigger missing
        # would both set it.
        if others and _complete(done[first]):
            with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL_INSTALLS, len(others))) as pool:
                installed = pool.map(self._install, (r for _, r in others))
                done.update(zip((key for key, _ in others), installed, strict=True))
        failed = [name for name, result in done.items() if not _complete(result)]
        results = {name: _summary(result) for name, result in done.items()}
        count = sum(len(r.installed) for r in done.values() if isinstance(r, TriggersResult))
        mended = _mended(reports, plan, done, self.topic_arn)
        if failed:
            why = f"{plan.why}; install failed on {', '.join(failed)}"
            return TriggerStep("failed", why, results, count, mended)
        return TriggerStep("installed", plan.why, results, count, mended)

    def _install(self, report: ControllerReport) -> TriggersResult | str:
        documents = NodeDocuments(self.runner, self.deadline_seconds, TriggerInstallFailed)
        target = report.target or report.instance_id
        try:
            output = documents.run(target, self.document, triggers_parameters("install", self.topic_arn))
        except TriggerInstallFailed as error:
            return str(error)[:300]
        return triggers_result(output)


def _complete(result: TriggersResult | str) -> bool:
    return isinstance(result, TriggersResult) and result.complete


def _summary(result: TriggersResult | str) -> Mapping[str, object]:
    return {"error": result} if isinstance(result, str) else result.to_json()


def _mended(
    reports: Sequence[ControllerReport],
    plan: InstallPlan,
    done: Mapping[str, TriggersResult | str],
    topic_arn: str,
) -> tuple[ControllerReport, ...] | None:
    """The reports as the install left the cluster: every trigger set once one install completed,
    the program in place where one completed."""
    completed = {id(report) for key, report in plan.targets if _complete(done.get(key, ""))}
    if not completed:
        return None

    def mend(report: ControllerReport) -> ControllerReport:
        found = report.slurm_triggers
        if plan.triggers_missing and found.missing_count is not None:
            found = dataclasses.replace(found, missing_count=0, missing=())
        if id(report) in completed:
            found = dataclasses.replace(found, program_state="executable", program_topic=topic_arn)
        return dataclasses.replace(report, slurm_triggers=found)

    return tuple(mend(report) for report in reports)
