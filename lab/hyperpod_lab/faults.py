"""The faults an operator injects into a running lab, by name, on one host.

``inject(lab, "kill", "ctl1")`` checks the name, the host and that the lab is up before it
touches anything (a :class:`LabFaultError`, a ``ValueError``, otherwise), applies the fault
and records it (``<root>/last-fault.json``) so a later verification can report the seconds
from the fault to its verdict. Every fault has its repair: ``stop``/``cont``, ``cut``/``heal``,
``kill``/``start``, ``conf-drift``/``conf-shared``, ``crash-loop``/``crash-fixed``,
``rpc-flood``/``job-flood`` and ``heal`` (or their own end, two minutes later), ... but
``forged-log``, whose refused jobs leave only lines in slurmctld's log. A fault
whose host is not in the state it needs (a slurm.conf already a local copy, a hung slurmctld to
re-read it, a crash loop already in place) is refused too.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from hyperpod_lab.lab import Lab
from hyperpod_lab.processes import stopped
from hyperpod_lab.topology import LabConfigError

FAULT_RECORD: Final = "last-fault.json"


class LabFaultError(ValueError):
    """The fault cannot be injected as asked (name, host, lab state). ``reason`` is safe to log."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Fault:
    summary: str
    apply: Callable[[Lab, str], object]
    controllers_only: bool = True
    computes_only: bool = False
    refused: Callable[[Lab, str], str | None] | None = None  # why the host's state does not allow it


def _conf_local_refused(lab: Lab, host: str) -> str | None:
    """conf-drift, onprog-off: from the shared copy, with a slurmctld that can read it again."""
    if not lab.conf_is_shared(host):
        return f"{host}'s slurm.conf is already a local copy (conf-shared first)"
    return _hung(lab, host)


def _conf_shared_refused(lab: Lab, host: str) -> str | None:
    if lab.conf_is_shared(host):
        return f"{host}'s slurm.conf is already the link to the shared copy"
    return _hung(lab, host)


def _hung(lab: Lab, host: str) -> str | None:
    pid = lab.pid(host, "slurmctld")
    if pid is not None and stopped(pid):
        return f"slurmctld on {host} is stopped (SIGSTOP) and would not read slurm.conf (cont first)"
    return None


def _crash_loop_refused(lab: Lab, host: str) -> str | None:
    if host in lab.crash_loop_hosts():
        return f"{host}'s slurmctld already exits at every start (crash-fixed first)"
    return _hung(lab, host)


def _crash_fixed_refused(lab: Lab, host: str) -> str | None:
    if host not in lab.crash_loop_hosts():
        return f"{host}'s slurmctld is not made to exit at start (crash-loop)"
    return None


def _heal(lab: Lab, host: str) -> object:
    lab.reconnect(host)
    return lab.stop_flood(host) if lab.topology.host(host).role == "compute" else None


def _flood_refused(lab: Lab, host: str) -> str | None:
    running = lab.running_flood(host)
    return f"{running.kind} already runs from {host} (heal {host} first)" if running else None


def _start(lab: Lab, host: str) -> object:
    # No wait: a 24.11 standby that cannot read the heartbeat answers nothing until it can.
    return lab.start_slurmctld(host, wait=False)


FAULTS: Final[dict[str, Fault]] = {
    "kill": Fault("SIGKILL slurmctld", lambda lab, host: lab.kill_slurmctld(host)),
    "stop": Fault("SIGSTOP slurmctld (hung)", lambda lab, host: lab.kill_slurmctld(host, signal.SIGSTOP)),
    "cont": Fault("SIGCONT slurmctld", lambda lab, host: lab.kill_slurmctld(host, signal.SIGCONT)),
    "start": Fault("start slurmctld again", _start),
    "cut": Fault("cut the host's network link", lambda lab, host: lab.isolate(host), controllers_only=False),
    "heal": Fault("restore the host's network link, end a flood from it", _heal, controllers_only=False),
    "dbd-stop": Fault("SIGTERM slurmdbd", lambda lab, host: lab.stop_slurmdbd(host)),
    "dbd-start": Fault("start slurmdbd again", lambda lab, host: lab.start_slurmdbd(host)),
    "state-ro": Fault("StateSaveLocation read-only", lambda lab, host: lab.make_state_unwritable(host)),
    "state-rw": Fault("StateSaveLocation writable again", lambda lab, host: lab.restore_state_writable(host)),
    "heartbeat-unreadable": Fault(
        "the heartbeat file cannot be read (StateSaveLocation hidden)",
        lambda lab, host: lab.hide_heartbeat(host),
    ),
    "heartbeat-readable": Fault(
        "the heartbeat file readable again", lambda lab, host: lab.show_heartbeat(host)
    ),
    "conf-drift": Fault(
        "slurm.conf a local copy with SlurmctldTimeout changed (sed -i on the link), read again",
        lambda lab, host: lab.drift_conf(host),
        refused=_conf_local_refused,
    ),
    "onprog-off": Fault(
        "slurm.conf a local copy without SlurmctldPrimaryOnProg/OffProg (sed -i on the link), read again",
        lambda lab, host: lab.drop_primary_programs(host),
        refused=_conf_local_refused,
    ),
    "conf-shared": Fault(
        "slurm.conf the link to the shared copy again, read again",
        lambda lab, host: lab.share_conf(host),
        refused=_conf_shared_refused,
    ),
    "crash-loop": Fault(
        "slurmctld exits at every start (a local acct_gather.conf it refuses), killed and started once",
        lambda lab, host: lab.crash_loop(host),
        refused=_crash_loop_refused,
    ),
    "crash-fixed": Fault(
        "the refused acct_gather.conf removed, slurmctld started again",
        lambda lab, host: lab.fix_crash_loop(host),
        refused=_crash_fixed_refused,
    ),
    "rpc-flood": Fault(
        "concurrent squeue, sinfo and scontrol loops as an ordinary user, in the background for "
        "two minutes or until heal",
        lambda lab, host: lab.flood(host, "rpc-flood"),
        controllers_only=False,
        computes_only=True,
        refused=_flood_refused,
    ),
    "job-flood": Fault(
        "job arrays of short jobs submitted in loops as an ordinary user, in the background for two "
        "minutes or until heal (which cancels them)",
        lambda lab, host: lab.flood(host, "job-flood"),
        controllers_only=False,
        computes_only=True,
        refused=_flood_refused,
    ),
    "forged-log": Fault(
        "jobs of an ordinary user whose partition is a phrase the verdict reads (in slurmctld's log)",
        lambda lab, host: lab.forge_log(host),
        controllers_only=False,
        computes_only=True,  # a user's jobs: from a compute node, as a user would submit them
    ),
}


def check(lab: Lab, fault: str, host: str) -> Fault:
    """The fault to inject, or :class:`LabFaultError` saying why it cannot be."""
    found = FAULTS.get(fault)
    if found is None:
        raise LabFaultError(f"no fault {fault[:40]!r}; known: {', '.join(FAULTS)}")
    try:
        target = lab.topology.host(host)
    except LabConfigError:
        names = ", ".join(h.name for h in lab.topology.hosts)
        raise LabFaultError(f"no lab host {host[:40]!r}; the lab's hosts: {names}") from None
    if found.controllers_only and target.role != "controller":
        raise LabFaultError(f"{fault} applies to controllers; {host} is a compute node")
    if found.computes_only and target.role != "compute":
        raise LabFaultError(f"{fault} applies to compute nodes; {host} is a controller")
    if not lab.is_up():
        raise LabFaultError("the lab is not up (hyperpod-ha lab up)")
    if found.refused is not None and (why := found.refused(lab, target.name)) is not None:
        raise LabFaultError(f"{fault} refused: {why}")
    return found


def inject(lab: Lab, fault: str, host: str) -> dict[str, Any]:
    """Apply the fault and record when; returns the record."""
    found = check(lab, fault, host)
    at = time.time()
    detail = found.apply(lab, host)
    record = {"fault": fault, "host": host, "summary": found.summary, "at": at}
    if isinstance(detail, str):
        record["detail"] = detail  # what the fault did there, when it says
    path = lab.paths.root / FAULT_RECORD
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record))
    tmp.replace(path)
    return record


def last_fault(root: Path) -> dict[str, Any] | None:
    """The fault injected since the last verification, if any."""
    try:
        record = json.loads((root / FAULT_RECORD).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and isinstance(record.get("at"), int | float) else None


def clear(root: Path) -> None:
    (root / FAULT_RECORD).unlink(missing_ok=True)
