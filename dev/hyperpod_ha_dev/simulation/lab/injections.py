"""The faults of the basic lab scenarios, their triggers and their checks."""

from __future__ import annotations

import secrets
import signal
import subprocess
import time
from typing import Final

from hyperpod_ha.slurm import (
    SlurmOutputError,
    parse_ping,
    parse_role_log,
)
from hyperpod_ha.verdict.accounting import NO_REGISTERED_CONTROLLER
from hyperpod_ha_dev.simulation.engine import ScenarioResult
from hyperpod_ha_dev.simulation.lab.errors import LabScenarioError
from hyperpod_ha_dev.simulation.lab.polling import poll
from hyperpod_ha_dev.simulation.lab.probes import (
    HEARTBEAT_FRESH_SECONDS,
    controller_names,
    daemon_running,
    last_role,
    registered,
)
from hyperpod_ha_dev.simulation.lab.progress import (
    TAKE_BACK_SECONDS,
    TAKEOVER_WAIT_SECONDS,
    Drill,
    off_message,
    on_message,
)
from hyperpod_ha_dev.simulation.lab.result import (
    final_verdict_detail,
)
from hyperpod_ha_dev.simulation.ticker import WatchdogTicker
from hyperpod_lab import Lab
from hyperpod_lab.forged_log import FORGED_PHRASES, FORGING_USER

# The lab's watchdog schedule ticks faster than the template's fastest rate (1 minute).
WATCHDOG_LAB_PERIOD_SECONDS: Final = 15.0


def kill_primary(drill: Drill) -> None:
    offset = drill.log_offset(drill.backup)
    drill.inject(
        f"SIGKILL slurmctld on {drill.primary} (the primary)", lambda: drill.lab.kill_slurmctld(drill.primary)
    )
    drill.notify_after_takeover(drill.backup, offset)


def failed_over(lab: Lab) -> str:
    """Precondition of ``back``: the primary killed and the backup in control and serving."""
    primary, backup = controller_names(lab)[:2]
    offset = len(lab.log(backup))
    lab.kill_slurmctld(primary)

    def serving() -> bool | None:
        if last_role(lab, backup, offset) != "primary":
            return None
        try:
            ping = parse_ping(lab.exec(backup, ["scontrol", "ping"], timeout=10).stdout)
        except (SlurmOutputError, subprocess.TimeoutExpired):
            return None
        states = {line.host: line.responding for line in ping}
        return True if states.get(backup) and states.get(primary) is False else None

    if poll(serving, TAKEOVER_WAIT_SECONDS) is None:
        raise LabScenarioError(f"{backup} did not take over from {primary} within {TAKEOVER_WAIT_SECONDS} s")
    return f"{primary}'s slurmctld killed; {backup} took over and serves"


def start_primary(drill: Drill) -> None:
    lab, primary, backup = drill.lab, drill.primary, drill.backup
    offsets = {name: drill.log_offset(name) for name in (primary, backup)}
    drill.inject(f"slurmctld on {primary} started again", lambda: lab.start_slurmctld(primary, wait=False))
    # The primary's ON program runs when it has control again; the backup's OFF program
    # when it is back in standby: the usual burst of a restart. (24.11 took up to 30 s here
    # to take control back: the active backup saves its state and steps down first.)
    if drill.wait_for_role(primary, offsets[primary], "primary", TAKE_BACK_SECONDS) is not None:
        drill.note(f"{primary} took control back", "logged 'Running as primary controller'")
    drill.notify(on_message(drill.address(primary)))
    if drill.wait_for_role(backup, offsets[backup], "standby", 20) is not None:
        drill.notify(off_message(drill.address(backup), "Backup"))


def registration_agrees(drill: Drill, result: ScenarioResult) -> None:
    """``back``: the verdict says what slurmdbd says. HEALTHY needs a registered controller;
    DEGRADED (24.11, when ctl2's closing connection clears ctl1's registration) must name the
    blank registration as its reason."""
    held = registered(drill.lab, drill.primary)
    detail = final_verdict_detail(result)
    agrees = (
        result.verdict == "HEALTHY"
        if held
        else result.verdict == "DEGRADED" and NO_REGISTERED_CONTROLLER in detail
    )
    drill.check(
        "the verdict agrees with slurmdbd's registration",
        agrees,
        f"sacctmgr names {'a' if held else 'no'} controller; verdict {detail[:200] or result.verdict}",
    )


def stop_primary(drill: Drill) -> None:
    offset = drill.log_offset(drill.backup)
    drill.inject(
        f"SIGSTOP slurmctld on {drill.primary} (hung: the process stays, answers nothing)",
        lambda: drill.lab.stop_slurmctld(drill.primary),
    )
    drill.notify_after_takeover(drill.backup, offset)


def stop_both(drill: Drill) -> None:
    lab = drill.lab

    def stop() -> None:
        # The backup first: with the primary gone first, it would take over.
        lab.kill_slurmctld(drill.backup, signal.SIGTERM)
        lab.kill_slurmctld(drill.primary, signal.SIGTERM)

    drill.inject(f"SIGTERM slurmctld on {drill.backup}, then on {drill.primary}", stop)
    # SlurmctldPrimaryOffProg runs on the primary when it shuts down.
    drill.notify(off_message(drill.address(drill.primary)))


def stop_both_silently(drill: Drill) -> None:
    """Both slurmctld stopped and nothing published (an FSx outage silences the ON/OFF
    programs): only the watchdog's schedule, ticking here every WATCHDOG_LAB_PERIOD_SECONDS
    with its own phase, can find it."""
    lab, period = drill.lab, WATCHDOG_LAB_PERIOD_SECONDS

    def stop() -> None:
        lab.kill_slurmctld(drill.backup, signal.SIGTERM)
        lab.kill_slurmctld(drill.primary, signal.SIGTERM)

    with WatchdogTicker(drill.run.stack, period) as ticker:
        # The fault lands inside a period, after at least one tick found the lab healthy, and at
        # least a tenth of a period after a tick: a tick's probes take a moment, and a fault
        # landing while they run is seen by that tick (once 0.3 s after one, in `make test`).
        time.sleep(period * (1 + (10 + secrets.randbelow(60)) / 100))
        drill.inject(f"SIGTERM slurmctld on {drill.backup}, then on {drill.primary}; nothing published", stop)
        found = ticker.wait_for_run(timeout=3 * period + 60)
    before = [tick for tick in ticker.ticks if drill.fault_at is None or tick.at < drill.fault_at]
    drill.check(
        "the watchdog's ticks before the fault started nothing",
        bool(before) and all(tick.outcome == "verified" for tick in before),
        ", ".join(f"{tick.outcome} ({tick.verdict})" for tick in before),
    )
    if found is None or drill.fault_at is None:
        drill.check(f"the watchdog found the fault within one period ({period:.0f} s)", False, "no run")
        return
    after = found.at - drill.fault_at
    drill.details["watchdog_period_seconds"] = period
    drill.details["fault_to_watchdog_tick_seconds"] = round(after, 1)
    drill.note("the watchdog found it", f"tick {after:.1f} s after the fault: {found.verdict}", at=found.at)
    drill.check(
        f"the watchdog found the fault within one period ({period:.0f} s)",
        0 <= after <= period,
        f"{after:.1f} s",
    )


def stop_slurmdbd(drill: Drill) -> None:
    lab = drill.lab
    drill.inject("SIGTERM slurmdbd on every controller", lab.stop_slurmdbd)
    job = lab.client(["srun", "-J", "hpha-dbd-down", "--nodes=1", "hostname"], timeout=30)
    drill.check(
        "a job runs while slurmdbd is down (scheduling goes on)", job.returncode == 0, job.stdout.strip()
    )
    drill.operator_run("slurmdbd stopped on every controller")


def isolate_primary(drill: Drill) -> None:
    drill.offsets[drill.backup] = drill.log_offset(drill.backup)
    drill.inject(
        f"{drill.primary} cut off the network (its slurmctld keeps running)",
        lambda: drill.lab.isolate(drill.primary),
    )
    drill.operator_run(f"{drill.primary} does not answer")


def no_takeover(drill: Drill, result: ScenarioResult) -> None:
    beat = drill.lab.heartbeat()
    fresh = (
        beat is not None
        and beat.writer_index == 0
        and time.time() - beat.beat_time <= HEARTBEAT_FRESH_SECONDS
    )
    drill.check(
        f"the heartbeat stays fresh, written by {drill.primary}",
        fresh,
        "no heartbeat"
        if beat is None
        else f"writer #{beat.writer_index}, {time.time() - beat.beat_time:.0f} s old",
    )
    roles = {
        line.event
        for line in parse_role_log(drill.lab.log(drill.backup)[drill.offsets.get(drill.backup, 0) :]).lines
    }
    drill.check(
        f"{drill.backup} did not take over",
        not roles & {"taking_over", "primary"},
        f"role lines logged: {sorted(roles) or 'none'}",
    )


def state_unwritable(drill: Drill) -> None:
    drill.offsets[drill.primary] = drill.log_offset(drill.primary)
    drill.inject("StateSaveLocation made read-only on every controller", drill.lab.make_state_unwritable)
    drill.operator_run("StateSaveLocation rejects writes")


def unwritable_seen(drill: Drill, result: ScenarioResult) -> None:
    log = drill.lab.log(drill.primary)[drill.offsets.get(drill.primary, 0) :]
    drill.check(
        f"{drill.primary}'s slurmctld still runs", daemon_running(drill.lab, drill.primary, "slurmctld")
    )
    drill.check(
        f"{drill.primary} logged that it cannot write the heartbeat", "heartbeat file creation failed" in log
    )
    verdict = final_verdict_detail(result)
    drill.check(
        "the verdict names the unwritable StateSaveLocation", "not writable" in verdict, verdict[:200]
    )


def forge_log(drill: Drill) -> None:
    """An ordinary user's jobs on a compute node, each with a phrase the verdict reads as its
    partition: the active controller logs each one (``_get_job_parts: invalid partition
    specified: <phrase>``) and nothing else changes. The watchdog's tick after it and an
    operator's run must still find the cluster HEALTHY (issue 35: a tick went DOWN on it)."""
    lab, period = drill.lab, WATCHDOG_LAB_PERIOD_SECONDS
    node = lab.topology.compute_hosts[0].name
    drill.offsets[drill.primary] = drill.log_offset(drill.primary)
    with WatchdogTicker(drill.run.stack, period) as ticker:
        drill.inject(
            f"as {FORGING_USER} on {node}: jobs whose partition is a phrase the verdict reads "
            "(alone, and after a carriage return and a forged time)",
            lambda: lab.forge_log(node),
        )
        poll(
            lambda: True if any(_after_fault(drill, tick.at) for tick in ticker.ticks) else None,
            2 * period + 30,
        )
    after = [tick for tick in ticker.ticks if _after_fault(drill, tick.at)]
    drill.check(
        "the watchdog's ticks after the fault found the cluster verified and started nothing",
        bool(after) and all(tick.outcome == "verified" and tick.verdict == "HEALTHY" for tick in after),
        ", ".join(f"{tick.outcome} ({tick.verdict})" for tick in after) or "no tick",
    )
    drill.operator_run("users' text in slurmctld's log")


def _after_fault(drill: Drill, at: float) -> bool:
    return drill.fault_at is not None and at > drill.fault_at


def forged_lines_logged(drill: Drill, result: ScenarioResult) -> None:
    """The fault reached the log (else the scenario would prove nothing), and the lab's own
    reading of that log still has the primary's role last."""
    log = drill.lab.log(drill.primary)[drill.offsets[drill.primary] :]
    forged = [line for line in log.split("\n") if "invalid partition specified: " in line]
    drill.check(
        f"{drill.primary}'s slurmctld logged every forged partition",
        len(forged) >= 2 * len(FORGED_PHRASES),
        f"{len(forged)} lines",
    )
    role = last_role(drill.lab, drill.primary)
    drill.check(f"{drill.primary}'s last role line is still primary", role == "primary", f"last role: {role}")
