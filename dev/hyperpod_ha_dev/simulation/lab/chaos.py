"""``hyperpod-ha lab chaos``: random faults from the lab's catalog at random times, each healed
after a random delay, while the stack watches: the watchdog ticking, the lab's ON/OFF programs
publishing on the failover topic, the runs they start (and the restores, with a mode other than
``off``) on the embedded stack against the real Slurm lab. Then a final heal (the lab's baseline
repair) and a settle, and the count of what the stack left (:mod:`.chaos_report`).

The template says ``WatchdogRateMinutes`` 1, its fastest; the harness delivers a tick every
:data:`TICK_SECONDS` (moto fires no schedule): faster than the real schedule, so a fault of a
minute or so is seen at all. ``RedundancyGraceMinutes`` is 1 and the runs check as the lab's
scenarios do (:data:`~.scenario.PERSISTENT_FAULT_PARAMETERS`, three checks).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from hyperpod_ha.observability import logger
from hyperpod_ha_dev.embedded.created_stack import EmbeddedStack
from hyperpod_ha_dev.embedded.site import SiteController
from hyperpod_ha_dev.simulation.engine import embedded_run
from hyperpod_ha_dev.simulation.lab import stack_records
from hyperpod_ha_dev.simulation.lab.baseline import restore_lab
from hyperpod_ha_dev.simulation.lab.chaos_plan import ChaosPlan, PlannedFault
from hyperpod_ha_dev.simulation.lab.chaos_report import (
    HEALTHY,
    ChaosResult,
    FaultOutcome,
    Observation,
    judge_fault,
)
from hyperpod_ha_dev.simulation.lab.errors import LabScenarioError
from hyperpod_ha_dev.simulation.lab.lock import lab_lock
from hyperpod_ha_dev.simulation.lab.node_secret import NodeSecret
from hyperpod_ha_dev.simulation.lab.scenario import PERSISTENT_FAULT_PARAMETERS
from hyperpod_ha_dev.simulation.lab.status_log import StatusLogPublisher
from hyperpod_ha_dev.simulation.lab.transport import LAB_TRANSPORT, attached_agent, lab_parameters
from hyperpod_ha_dev.simulation.lab.verify import LabNotUp
from hyperpod_ha_dev.simulation.ticker import Tick, WatchdogTicker
from hyperpod_lab import Lab, LabError
from hyperpod_lab.faults import LabFaultError, clear, inject

TICK_SECONDS: Final = 25.0
CHAOS_PARAMETERS: Final = {
    **PERSISTENT_FAULT_PARAMETERS,
    "MaxAttempts": 3,
    "WatchdogRateMinutes": 1,
    "RedundancyGraceMinutes": 1,
}
RESTORE_MODES: Final = ("off", "standbys", "all")
# After the final heal: until a tick sees the cluster HEALTHY, no run or restore runs and no
# incident is open (a recovery tick's run resolves what the watchdog opened), or this long.
SETTLE_SECONDS: Final = 240.0
RUNS_END_SECONDS: Final = 180.0

Tell = Callable[[str], None]


@dataclass(frozen=True)
class _Applied:
    """A planned fault as the lab took it (epoch seconds; None: refused) and its heal."""

    planned: PlannedFault
    injected_at: float | None
    detail: str
    healed_at: float | None = None
    heal_detail: str = ""


def run_chaos(
    lab: Lab, root: Path, plan: ChaosPlan, restore: str = "off", tell: Tell | None = None
) -> ChaosResult:
    """Run ``plan`` against the lab (root only; the lab lock held throughout) and count."""
    if restore not in RESTORE_MODES:
        raise ValueError(f"restore must be one of {', '.join(RESTORE_MODES)}")
    if not lab.is_up():  # before the lock: a refusal never waits for another user of the lab
        raise LabNotUp("the lab is not up (hyperpod-ha lab up)")
    say = tell or (lambda _: None)
    with lab_lock():
        began = time.time()
        repaired = restore_lab(lab)
        if repaired:
            say(f"lab brought to its baseline first: {'; '.join(repaired)}")
        controllers = [
            SiteController(c["instance_id"], c["private_ip"], c["hostname"]) for c in lab.controllers()
        ]
        settings: dict[str, Any] = {**CHAOS_PARAMETERS, "RestoreRedundancy": restore}
        secret = NodeSecret(lab.paths.node_secret_dir)
        try:
            with (
                attached_agent(lab, secret),
                embedded_run(
                    root,
                    controllers,
                    LAB_TRANSPORT,
                    lab_parameters(settings),
                    function_transports={"RestoreRedundancyFunction": LAB_TRANSPORT},
                ) as run,
            ):
                stack = run.stack
                with (
                    WatchdogTicker(stack, TICK_SECONDS, keep_ticking=True) as ticker,
                    StatusLogPublisher(lab, run) as publisher,
                ):
                    started = time.time()
                    applied = _apply_plan(lab, plan, started, say)
                    final_heal, notes = _final_heal(lab, say)
                    healed = time.time()
                    _settle(stack, ticker.ticks, healed, say)
                _wait_for_runs(stack, RUNS_END_SECONDS)
                try:
                    return _result(
                        stack,
                        plan,
                        restore,
                        started,
                        applied,
                        ticker.ticks,
                        healed,
                        final_heal,
                        notes,
                        len(publisher.published),
                        time.time() - began,
                    )
                finally:
                    stack.stop_running_executions()
        finally:
            secret.close()
            clear(lab.paths.root)


def _apply_plan(lab: Lab, plan: ChaosPlan, started: float, say: Tell) -> list[_Applied]:
    applied = []
    for planned in plan.faults:
        _sleep_until(started + planned.at)
        at, detail = _inject(lab, planned.fault, planned.host)
        say(f"{_clock(time.time() - started)}  {planned.fault} {planned.host}: {detail}")
        _sleep_until(started + planned.heal_at)
        if at is None:  # nothing to heal
            applied.append(_Applied(planned, None, detail))
            continue
        healed_at, heal_detail = _inject(lab, planned.heal, planned.host)
        say(f"{_clock(time.time() - started)}  {planned.heal} {planned.host}: {heal_detail}")
        applied.append(_Applied(planned, at, detail, healed_at or time.time(), heal_detail))
    _sleep_until(started + plan.minutes * 60)
    return applied


def _inject(lab: Lab, fault: str, host: str) -> tuple[float | None, str]:
    """When the catalog's fault was applied and what it did; (None, why) when the lab refused
    (a heal the stack's restore already did is refused too: nothing left to heal)."""
    try:
        record = inject(lab, fault, host)
    except (LabFaultError, LabError) as problem:
        logger.info("chaos: the lab refused a fault", extra={"fault": fault, "host": host})
        return None, f"refused: {problem.reason}"
    return float(record["at"]), str(record.get("detail") or record["summary"])


def _final_heal(lab: Lab, say: Tell) -> tuple[tuple[str, ...], tuple[str, ...]]:
    try:
        repairs = tuple(restore_lab(lab))
    except (LabScenarioError, LabError) as problem:
        say(f"final heal: {problem.reason}")
        return (), (f"the final heal did not bring the lab to its baseline: {problem.reason}",)
    say(f"final heal: {'; '.join(repairs) or 'nothing to repair'}")
    return repairs, ()


def _settle(stack: EmbeddedStack, ticks: Sequence[Tick], healed: float, say: Tell) -> None:
    deadline = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < deadline:
        after = [tick for tick in ticks if tick.at >= healed and tick.verdict is not None]
        if after and after[-1].verdict == HEALTHY and not _running(stack) and not _open(stack):
            say(f"settled {time.time() - healed:.0f} s after the final heal")
            return
        time.sleep(2.0)
    say(f"not settled {SETTLE_SECONDS:.0f} s after the final heal")


def _running(stack: EmbeddedStack) -> bool:
    executions = [*stack.executions(stack_records.VERIFICATION), *stack.executions(stack_records.RESTORE)]
    return any(e["status"] == "RUNNING" for e in executions)


def _open(stack: EmbeddedStack) -> bool:
    return any(not item.resolved for item in stack_records.incidents())


def _wait_for_runs(stack: EmbeddedStack, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while _running(stack) and time.monotonic() < deadline:
        time.sleep(1.0)


def _result(
    stack: EmbeddedStack,
    plan: ChaosPlan,
    restore: str,
    started: float,
    applied: Sequence[_Applied],
    ticks: Sequence[Tick],
    healed: float,
    final_heal: tuple[str, ...],
    notes: tuple[str, ...],
    published: int,
    seconds: float,
) -> ChaosResult:
    observations = [
        *(
            Observation(t.at, "tick", t.verdict, t.redundancy, t.reasons)
            for t in ticks
            if t.verdict is not None
        ),
        *stack_records.run_observations(stack),
    ]
    first = min((a.injected_at for a in applied if a.injected_at is not None), default=healed)
    baseline_named = frozenset(
        host
        for o in observations
        if o.at < first and o.verdict == HEALTHY
        for reason in o.reasons
        for host in (a.planned.host for a in applied)
        if host in reason
    )
    outcomes: list[FaultOutcome] = []
    for index, done in enumerate(applied):
        until = next((a.injected_at for a in applied[index + 1 :] if a.injected_at is not None), healed)
        outcomes.append(
            judge_fault(
                done.planned,
                done.injected_at,
                done.healed_at,
                until,
                observations,
                baseline_named,
                (done.detail, done.heal_detail),
            )
        )
    after = [o for o in observations if o.at >= healed]
    failed_ticks = sum(1 for t in ticks if t.outcome is None)
    return ChaosResult(
        plan=plan,
        restore_mode=restore,
        started=started,
        faults=tuple(outcomes),
        ticks=len(ticks),
        runs_started=len(stack.executions(stack_records.VERIFICATION)),
        incidents=tuple(stack_records.incidents()),
        leases_held_at_end=stack_records.leases_held(stack),
        uncaught_failures=tuple(stack_records.uncaught_failures(stack)),
        restore_actions=tuple(stack_records.restore_actions(stack)),
        final=max(after, key=lambda o: o.at) if after else None,
        final_heal=final_heal,
        seconds=seconds,
        published=published,
        notes=(*notes, *([f"{failed_ticks} watchdog tick(s) failed"] if failed_ticks else [])),
    )


def _sleep_until(at: float) -> None:
    time.sleep(max(0.0, at - time.time()))


def _clock(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}:{rest:02d}"
