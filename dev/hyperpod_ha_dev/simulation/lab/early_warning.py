"""The early warnings against the real Slurm lab (issue 39), on the embedded stack whose watchdog
ticks as the schedule would (every :data:`TICK_SECONDS`; moto fires no schedule):

- ``overload``: quiet ticks on the healthy lab, then ``rpc-flood`` from a compute node; the
  ``controller-overloaded`` incident opens on the active controller, then resolves at the first
  tick after ``heal`` ended the flood.
- ``accounting``: ``dbd-stop`` on the active controller and ``job-flood`` from a compute node;
  ``accounting-at-risk`` opens with its time-to-loss estimate, and (the lab's MaxDBDMsgs at
  Slurm's floor, 10,000) before slurmctld logs its first dropped record; then ``heal`` and
  ``dbd-start``, and it resolves.

The lab's thresholds (:data:`LAB_THRESHOLDS`) are lower than the stack's defaults: the lab is two
controllers and two one-CPU nodes on a shared machine. The runs also show that with them the
healthy lab gives no warning; the stack's defaults give none on it either (every other lab run).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from hyperpod_ha.early_warning.models import KIND_ACCOUNTING_AT_RISK, KIND_OVERLOADED
from hyperpod_ha_dev.embedded.created_stack import EmbeddedStack
from hyperpod_ha_dev.embedded.site import SiteController
from hyperpod_ha_dev.simulation.engine import embedded_run
from hyperpod_ha_dev.simulation.lab import stack_records
from hyperpod_ha_dev.simulation.lab.baseline import restore_lab
from hyperpod_ha_dev.simulation.lab.lock import lab_lock
from hyperpod_ha_dev.simulation.lab.node_secret import NodeSecret
from hyperpod_ha_dev.simulation.lab.transport import LAB_TRANSPORT, attached_agent, lab_parameters
from hyperpod_ha_dev.simulation.lab.verify import LabNotUp
from hyperpod_lab import Lab
from hyperpod_lab.faults import clear, inject

TICK_SECONDS: Final = 10.0
QUIET_TICKS: Final = 3
# The lab's thresholds: a loaded lab slurmctld, not a large cluster's (see the module's words).
LAB_THRESHOLDS: Final = {
    "OverloadServerThreads": 8,
    "OverloadAgentQueue": 1000,
    "OverloadRpcAverageMs": 4,
    "OverloadRoundTripMs": 10000,
    "OverloadWindowMinutes": 0,
    "AccountingRiskHorizonMinutes": 60,
}
PARAMETERS: Final = {"WatchdogRateMinutes": 1, **LAB_THRESHOLDS}
OVERLOAD_SECONDS: Final = 240.0  # the flood's bound, and the longest wait for the warning
ACCOUNTING_SECONDS: Final = 600.0
RESOLVE_SECONDS: Final = 120.0
# slurmctld's lines when it drops accounting records (src/plugins/accounting_storage/slurmdbd/
# slurmdbd_agent.c, as the lab's 24.11.5 logs them): step records purged at MaxDBDMsgs - 1
# ("... _max_dbd_msg_action: purge 242 step records"; "purge 0" drops nothing), then every new
# record discarded ("error: agent queue is full (10000), discarding DBD_JOB_COMPLETE:1424 request").
DROPPED: Final = re.compile(
    r"^\[(?P<at>[^\]]+)\] (?:error: )?(?:accounting_storage/slurmdbd: )?"
    r"(?:_max_dbd_msg_action: purge [1-9][0-9]* step records|agent queue is full)"
)

Tell = Callable[[str], None]


@dataclass(frozen=True)
class TickSeen:
    at: float
    verdict: str | None
    warnings: tuple[str, ...]  # kinds
    steps: Mapping[str, str]
    figures: Mapping[str, Any]  # the active controller's


@dataclass(frozen=True)
class WarningRun:
    kind: str
    fault_at: float
    ticks: tuple[TickSeen, ...]
    opened_at: float | None  # the first tick that asked for the incident
    resolved_at: float | None
    incidents: tuple[tuple[str, str], ...]  # (kind, status) of every OpsItem
    first_drop_at: float | None = None  # slurmctld's first dropped accounting record
    time_to_loss_seconds: float | None = None  # the estimate at the opening
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def quiet_before(self) -> bool:
        return all(not tick.warnings for tick in self.ticks if tick.at < self.fault_at)

    @property
    def lead_seconds(self) -> float | None:
        if self.opened_at is None or self.first_drop_at is None:
            return None
        return self.first_drop_at - self.opened_at


def run_overload(lab: Lab, root: Path, tell: Tell | None = None) -> WarningRun:
    return _run(lab, root, KIND_OVERLOADED, tell or (lambda _: None))


def run_accounting(lab: Lab, root: Path, tell: Tell | None = None) -> WarningRun:
    return _run(lab, root, KIND_ACCOUNTING_AT_RISK, tell or (lambda _: None))


def _run(lab: Lab, root: Path, kind: str, say: Tell) -> WarningRun:
    if not lab.is_up():
        raise LabNotUp("the lab is not up (hyperpod-ha lab up)")
    with lab_lock():
        restore_lab(lab)
        controllers = [
            SiteController(c["instance_id"], c["private_ip"], c["hostname"]) for c in lab.controllers()
        ]
        secret = NodeSecret(lab.paths.node_secret_dir)
        try:
            with (
                attached_agent(lab, secret),
                embedded_run(root, controllers, LAB_TRANSPORT, lab_parameters(PARAMETERS)) as run,
            ):
                if kind == KIND_OVERLOADED:
                    return _overload(lab, run.stack, say)
                return _accounting(lab, run.stack, say)
        finally:
            secret.close()
            clear(lab.paths.root)
            restore_lab(lab)


def _overload(lab: Lab, stack: EmbeddedStack, say: Tell) -> WarningRun:
    compute = lab.topology.compute_hosts[0].name
    ticks = _quiet(stack, say)
    fault_at = float(inject(lab, "rpc-flood", compute)["at"])
    say(f"rpc-flood from {compute}")
    opened = _tick_until(
        stack, ticks, lambda t: t.steps.get(KIND_OVERLOADED) == "open", OVERLOAD_SECONDS, say
    )
    inject(lab, "heal", compute)
    say(f"heal {compute}")
    resolved = _tick_until(
        stack, ticks, lambda t: t.steps.get(KIND_OVERLOADED) == "resolve", RESOLVE_SECONDS, say
    )
    return WarningRun(
        KIND_OVERLOADED,
        fault_at,
        tuple(ticks),
        opened.at if opened else None,
        resolved.at if resolved else None,
        _incidents(),
    )


def _accounting(lab: Lab, stack: EmbeddedStack, say: Tell) -> WarningRun:
    active = lab.topology.controller_hosts[0].name
    compute = lab.topology.compute_hosts[0].name
    log_from = len(lab.log(active))
    ticks = _quiet(stack, say)
    fault_at = float(inject(lab, "dbd-stop", active)["at"])
    lab.flood(compute, "job-flood", seconds=int(ACCOUNTING_SECONDS))
    say(f"dbd-stop {active}, job-flood from {compute}")

    def dropped() -> float | None:
        return first_dropped_record(lab.log(active)[log_from:])

    opened = _tick_until(
        stack,
        ticks,
        lambda t: t.steps.get(KIND_ACCOUNTING_AT_RISK) == "open",
        ACCOUNTING_SECONDS,
        say,
    )
    estimate = None
    if opened is not None:
        rate, queue, limit = (
            opened.figures.get(k) for k in ("dbd_queue_rate", "dbd_agent_queue", "max_dbd_msgs")
        )
        if isinstance(rate, int | float) and rate > 0 and isinstance(queue, int) and isinstance(limit, int):
            estimate = max(limit - 1 - queue, 0) / rate
    # Until the first record is dropped (the lead time's end), ticking as before.
    _tick_until(stack, ticks, lambda _: dropped() is not None, ACCOUNTING_SECONDS, say)
    first_drop = dropped()
    inject(lab, "heal", compute)
    inject(lab, "dbd-start", active)
    say(f"heal {compute}, dbd-start {active}")
    resolved = _tick_until(
        stack, ticks, lambda t: t.steps.get(KIND_ACCOUNTING_AT_RISK) == "resolve", RESOLVE_SECONDS, say
    )
    return WarningRun(
        KIND_ACCOUNTING_AT_RISK,
        fault_at,
        tuple(ticks),
        opened.at if opened else None,
        resolved.at if resolved else None,
        _incidents(),
        first_drop_at=first_drop,
        time_to_loss_seconds=estimate,
    )


def _quiet(stack: EmbeddedStack, say: Tell) -> list[TickSeen]:
    """The healthy lab's ticks, one :data:`TICK_SECONDS` apart (a window of counters each)."""
    ticks: list[TickSeen] = []
    _tick_until(stack, ticks, lambda _: len(ticks) >= QUIET_TICKS, TICK_SECONDS * (QUIET_TICKS + 2), say)
    return ticks


def _tick(stack: EmbeddedStack, say: Tell) -> TickSeen:
    at = time.time()
    answer = stack.tick()
    result = answer if isinstance(answer, dict) else {}
    figures: dict[str, Any] = next((f for f in result.get("figures") or [] if f.get("role") == "active"), {})
    seen = TickSeen(
        at,
        result.get("verdict"),
        tuple(str(w.get("kind")) for w in result.get("warnings") or []),
        dict(result.get("warning_steps") or {}),
        figures,
    )
    say(
        f"tick {time.strftime('%H:%M:%S', time.localtime(at))}: {seen.verdict}, warnings "
        f"{list(seen.warnings)}, threads {figures.get('server_threads')}, round trip "
        f"{figures.get('round_trip_ms')} ms, rpc {figures.get('rpc_average_ms')} ms, dbd queue "
        f"{figures.get('dbd_agent_queue')} ({figures.get('dbd_queue_rate')}/s)"
    )
    return seen


def _tick_until(
    stack: EmbeddedStack,
    ticks: list[TickSeen],
    done: Callable[[TickSeen], bool],
    timeout: float,
    say: Tell,
) -> TickSeen | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        began = time.monotonic()
        seen = _tick(stack, say)
        ticks.append(seen)
        if done(seen):
            return seen
        time.sleep(max(0.0, TICK_SECONDS - (time.monotonic() - began)))
    return None


def first_dropped_record(log: str) -> float | None:
    for line in log.splitlines():
        if (match := DROPPED.match(line)) is not None:
            return _log_time(match["at"])
    return None


def _log_time(stamp: str) -> float | None:
    """slurmctld's local ``2026-12-06T11:50:01.123`` as epoch seconds."""
    whole, _, fraction = stamp.partition(".")
    try:
        seconds = time.mktime(time.strptime(whole, "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return None
    return seconds + (int(fraction) / 10 ** len(fraction) if fraction.isdigit() else 0.0)


def _incidents() -> tuple[tuple[str, str], ...]:
    return tuple((record.kind, record.status) for record in stack_records.incidents())


def summary(run: WarningRun) -> Sequence[str]:
    """The run in a few lines, for people and the bench."""
    lines = [
        f"{run.kind}: quiet before the fault: {run.quiet_before}; opened "
        f"{_after(run.opened_at, run.fault_at)} after the fault; resolved "
        f"{_after(run.resolved_at, run.fault_at)}",
        f"incidents: {', '.join(f'{kind} {status}' for kind, status in run.incidents) or 'none'}",
    ]
    if run.kind == KIND_ACCOUNTING_AT_RISK:
        lines.append(
            f"estimate at the opening: {run.time_to_loss_seconds} s; first dropped record "
            f"{_after(run.first_drop_at, run.fault_at)} after the fault; lead time {run.lead_seconds} s"
        )
    return lines


def _after(at: float | None, start: float) -> str:
    return "never" if at is None else f"{at - start:.0f} s"
