"""What the lab's hosts show: roles logged, daemons running, heartbeat, registrations, nodes."""

from __future__ import annotations

import subprocess
import time
from typing import Final

from hyperpod_ha.slurm import (
    SlurmOutputError,
    parse_cluster_registrations,
    parse_role_log,
)
from hyperpod_lab import Lab, LabError
from hyperpod_lab.config import SLURMCTLD_PORT
from hyperpod_lab.processes import stopped
from hyperpod_lab.topology import CLUSTER_NAME

# The active controller beats every min(SlurmctldTimeout/4, 30) s: 2.5 s in the lab.
HEARTBEAT_FRESH_SECONDS: Final = 8.0


def controller_names(lab: Lab) -> list[str]:
    return [host.name for host in lab.topology.controller_hosts]


def last_role(lab: Lab, host: str, offset: int = 0) -> str | None:
    """The last role line in ``host``'s slurmctld log (from ``offset``): primary, standby, ..."""
    last = parse_role_log(lab.log(host)[offset:]).last
    return last.event if last else None


def daemon_running(lab: Lab, host: str, daemon: str) -> bool:
    pid = lab.pid(host, daemon)
    return pid is not None and not stopped(pid)


def heartbeat_problem(lab: Lab, writer: int) -> str | None:
    beat = lab.heartbeat()
    if beat is None:
        return "no heartbeat file"
    age = time.time() - beat.beat_time
    if beat.writer_index != writer or age > HEARTBEAT_FRESH_SECONDS:
        return f"heartbeat last written {age:.0f} s ago by controller #{beat.writer_index}"
    return None


def registered(lab: Lab, host: str) -> bool:
    """Whether ``host``'s slurmdbd answers and has a controller registered for the cluster."""
    try:
        done = lab.exec(
            host,
            ["sacctmgr", "-n", "-P", "show", "cluster", "format=cluster,controlhost,controlport"],
            timeout=10,
        )
    except (subprocess.TimeoutExpired, LabError):
        return False
    if done.returncode != 0:
        return False
    try:
        rows = parse_cluster_registrations(done.stdout)
    except SlurmOutputError:
        return False
    return any(
        row.cluster == CLUSTER_NAME and row.control_host and row.control_port == SLURMCTLD_PORT
        for row in rows
    )


def dbd_answers(lab: Lab, host: str) -> bool:
    try:
        done = lab.exec(host, ["sacctmgr", "-n", "-P", "show", "cluster", "format=cluster"], timeout=10)
    except (subprocess.TimeoutExpired, LabError):
        return False
    return done.returncode == 0


def isolated_hosts(lab: Lab) -> list[str]:
    hosts = lab.status().get("hosts")
    if not isinstance(hosts, dict):
        return []
    return [name for name, host in hosts.items() if isinstance(host, dict) and host.get("isolated")]


def state_read_only(lab: Lab) -> bool:
    return lab.status().get("state_read_only") is True


def heartbeat_hidden_hosts(lab: Lab) -> list[str]:
    hidden = lab.status().get("heartbeat_hidden_hosts")
    return [str(name) for name in hidden] if isinstance(hidden, list) else []


def node_states(lab: Lab) -> dict[str, str]:
    """Compute node -> state as the active controller reports it (``down*``, ``idle``, ...)."""
    try:
        nodes = lab.client(["sinfo", "-h", "-N", "-o", "%N %T"], timeout=15)
    except subprocess.TimeoutExpired:
        return {}
    return {words[0]: words[1] for words in map(str.split, nodes.stdout.splitlines()) if len(words) == 2}


def primary_serves(lab: Lab, primary: str) -> bool:
    return (
        daemon_running(lab, primary, "slurmctld")
        and last_role(lab, primary) == "primary"
        and heartbeat_problem(lab, writer=0) is None
    )
