"""The lab's clean baseline: what is wrong with it, and getting back there."""

from __future__ import annotations

import contextlib
import signal
import subprocess
from collections.abc import Sequence
from typing import Final

from hyperpod_ha.slurm import (
    SlurmOutputError,
    parse_ping,
)
from hyperpod_ha_dev.simulation.lab.errors import LabScenarioError
from hyperpod_ha_dev.simulation.lab.polling import poll
from hyperpod_ha_dev.simulation.lab.probes import (
    HEARTBEAT_FRESH_SECONDS,
    controller_names,
    daemon_running,
    heartbeat_hidden_hosts,
    heartbeat_problem,
    isolated_hosts,
    last_role,
    node_states,
    primary_serves,
    registered,
    state_read_only,
)
from hyperpod_lab import Lab, LabError
from hyperpod_lab.processes import stopped

RESTORE_SECONDS: Final = 45.0
# How long a restarted primary may take to answer ping: on Slurm 24.11 one that asks a backup
# for control back answered after 34-40 s in the lab's drills, and once in CI (after the
# 3-controller scenarios, every slurmctld stopped first) the 30 s default ran out.
PRIMARY_START_SECONDS: Final = 90.0


def baseline_problems(lab: Lab) -> list[str]:
    """Why the lab is not in its clean baseline (empty when it is): every host connected and
    running its daemons, every controller reading the shared slurm.conf, the first controller
    active (log and heartbeat), the others in standby, every controller answering ping, a
    controller registered with every slurmdbd, every compute node idle."""
    if not lab.is_up():
        return ["the lab is not up"]
    problems = [f"{name} is cut off the network" for name in isolated_hosts(lab)]
    problems += [f"a flood runs from {name}" for name in lab.flood_hosts()]
    if state_read_only(lab):
        problems.append("StateSaveLocation is read-only")
    problems += [f"{name} cannot read the heartbeat" for name in heartbeat_hidden_hosts(lab)]
    problems += [f"{name}'s slurm.conf is a local copy" for name in lab.local_conf_hosts()]
    problems += [f"{name}'s slurmctld exits at every start (crash-loop)" for name in lab.crash_loop_hosts()]
    for host in lab.topology.hosts:
        problems += [
            f"{daemon} does not run on {host.name}"
            for daemon in host.daemons
            if not daemon_running(lab, host.name, daemon)
        ]
    if problems:
        return problems
    primary, *others = controller_names(lab)
    if (role := last_role(lab, primary)) != "primary":
        problems.append(f"{primary} last logged {role!r}, not 'Running as primary controller'")
    problems += [
        f"{name} last logged {role!r}, not standby"
        for name in others
        if (role := last_role(lab, name)) != "standby"
    ]
    if (beat := heartbeat_problem(lab, writer=0)) is not None:
        problems.append(beat)
    try:
        ping = parse_ping(lab.client(["scontrol", "ping"], timeout=15).stdout)
    except (SlurmOutputError, subprocess.TimeoutExpired):
        ping = []
    answering = {line.host for line in ping if line.responding}
    problems += [f"{name} does not answer ping" for name in [primary, *others] if name not in answering]
    problems += [
        f"no controller registered with {name}'s slurmdbd"
        for name in [primary, *others]
        if not registered(lab, name)
    ]
    states = node_states(lab)
    problems += [
        f"{host.name} is {states.get(host.name, 'not listed')}, not idle"
        for host in lab.topology.compute_hosts
        if states.get(host.name) != "idle"
    ]
    return problems


def _stop_slurmctld(lab: Lab, host: str) -> None:
    pid = lab.pid(host, "slurmctld")
    if pid is None:
        return
    # A stopped (hung) process would not handle SIGTERM until continued; SIGKILL ends it.
    with contextlib.suppress(LabError):
        lab.kill_slurmctld(host, signal.SIGKILL if stopped(pid) else signal.SIGTERM)


def restore_lab(lab: Lab, timeout: float = RESTORE_SECONDS) -> list[str]:
    """Repair whatever a scenario left (idempotent) and wait for the clean baseline.

    Returns what was repaired; raises :class:`LabScenarioError` when the baseline does not
    come back within ``timeout``.
    """
    repairs: list[str] = []
    repairs += [said for name in lab.flood_hosts() if (said := lab.stop_flood(name))]
    if state_read_only(lab):
        lab.restore_state_writable()
        repairs.append("StateSaveLocation writable again")
    for name in heartbeat_hidden_hosts(lab):
        lab.show_heartbeat(name)
        repairs.append(f"{name} reads the heartbeat again")
    for name in isolated_hosts(lab):
        lab.reconnect(name)
        repairs.append(f"{name} reconnected")
    repairs += _repair_files(lab)
    primary, *others = controller_names(lab)
    # Backups first: a slurmdbd that starts asks its own host's slurmctld to register again.
    for name in [*others, primary]:
        if lab.pid(name, "slurmdbd") is None:
            lab.start_slurmdbd(name)
            repairs.append(f"slurmdbd started on {name}")
    repairs += _restore_controllers(lab, primary, others)
    poll(lambda: True if primary_serves(lab, primary) else None, timeout)
    if poll(lambda: True if registered(lab, primary) else None, 5) is None:
        # Only a (re)start of the active slurmctld registers it with slurmdbd again.
        lab.kill_slurmctld(primary, signal.SIGTERM)
        lab.start_slurmctld(primary, timeout=PRIMARY_START_SECONDS)
        repairs.append(f"slurmctld on {primary} restarted to register with slurmdbd again")
    resumed: set[str] = set()
    cancelled: set[str] = set()

    def clean() -> bool | None:
        states = node_states(lab)
        # A node the controller lost for SlurmdTimeout is DOWN; ReturnToService brings it back
        # only after the controller's next, infrequent check (about two minutes here). Nodes
        # are marked one by one, also just after the network came back: resume them as they go.
        down = sorted(node for node, state in states.items() if state.startswith(("down", "drain")))
        if down:
            lab.client(["scontrol", "update", f"NodeName={','.join(down)}", "State=RESUME"], timeout=15)
            resumed.update(down)
            return None
        # A controller killed moments after a job ended may not have saved that: the next
        # one recovers the job as running. No scenario leaves a job of its own behind.
        if any(state.startswith(("alloc", "mix")) for state in states.values()):
            jobs = set(lab.client(["squeue", "-h", "-o", "%i"], timeout=15).stdout.split()) - cancelled
            if jobs:
                lab.client(["scancel", *sorted(jobs)], timeout=15)
                cancelled.update(jobs)
            return None
        return None if baseline_problems(lab) else True

    finished = poll(clean, timeout, interval=0.5)
    if resumed:
        repairs.append(f"{', '.join(sorted(resumed))} resumed")
    if cancelled:
        repairs.append(f"left-over job(s) {', '.join(sorted(cancelled))} cancelled")
    if finished is None:
        remaining = baseline_problems(lab)
        if remaining:
            raise LabScenarioError("the lab did not return to its baseline: " + "; ".join(remaining[:4]))
    return repairs


def _repair_files(lab: Lab) -> list[str]:
    """Each controller's /etc/slurm as ``up`` made it: the link to the shared slurm.conf, no
    acct_gather.conf that slurmctld refuses."""
    repairs = []
    for name in lab.local_conf_hosts():
        if (pid := lab.pid(name, "slurmctld")) is not None and stopped(pid):
            _stop_slurmctld(lab, name)  # hung: it reads the shared copy when started below
        repairs.append(lab.share_conf(name))
    for name in lab.crash_loop_hosts():
        _stop_slurmctld(lab, name)
        repairs.append(lab.fix_crash_loop(name))
    return repairs


def _restore_controllers(lab: Lab, primary: str, others: Sequence[str]) -> list[str]:
    if daemon_running(lab, primary, "slurmctld") and last_role(lab, primary) == "primary":
        # Still in control: a heartbeat that paused (StateSaveLocation was read-only) resumes.
        poll(lambda: True if primary_serves(lab, primary) else None, HEARTBEAT_FRESH_SECONDS)
    if not primary_serves(lab, primary):
        # Starting the primary while a backup is still taking over gives two active
        # controllers for a while: stop them all, then start the primary first.
        for name in [*others, primary]:
            _stop_slurmctld(lab, name)
        lab.start_slurmctld(primary, timeout=PRIMARY_START_SECONDS)
        for name in others:
            lab.start_slurmctld(name)
        return [f"slurmctld restarted on every controller, {primary} first"]
    repairs = []
    for name in others:
        if not daemon_running(lab, name, "slurmctld"):
            _stop_slurmctld(lab, name)
            lab.start_slurmctld(name)
            repairs.append(f"slurmctld restarted on {name}")
    return repairs
