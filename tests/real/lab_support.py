"""The lab tests' helpers: requests, waiting, and what ``/proc``, the lab's hosts and MariaDB show
(the lab itself is a fixture of ``conftest.py``)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hyperpod_ha.commands import CommandRequest
from hyperpod_ha_dev.simulation.lab import lab_lock
from hyperpod_lab import Lab, Topology
from hyperpod_lab.accounting_db import AdminConnection
from hyperpod_lab.packages import ensure_packages
from hyperpod_lab.preflight import missing_prerequisite
from hyperpod_lab.processes import command_name
from hyperpod_lab.releases import release

DOCUMENT = "AWS-StartNonInteractiveCommand"
# The Slurm release the lab runs: 24.11 (HyperPod's) unless CI's smaller 22.05 run asks.
SLURM = os.environ.get("HYPERPOD_LAB_SLURM", "24.11")
# Takeover needs SlurmctldTimeout without an answer plus the backup's next check (the
# captures saw 10-12 s with 10 s); the margin absorbs a loaded two-core machine.
TAKEOVER_MARGIN_SECONDS = 8.0


@contextlib.contextmanager
def lab_session(*, up: bool = False, no_leftovers: bool = False) -> Iterator[Lab]:
    """A module's lab (2 controllers, 2 nodes, ``SLURM``) under the machine's lab lock, down at
    the end; skipped without root or the lab's prerequisites, failed instead under CI."""
    missing = missing_prerequisite()
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing} (CI=true: the lab tests must run)")
        pytest.skip(missing)
    ensure_packages(release(SLURM).packages)
    with lab_lock():
        lab = Lab(Topology(controllers=2, nodes=2, slurm=SLURM))
        try:
            if up:
                lab.up(install_packages=False)
            yield lab
        finally:
            lab.down()
        if no_leftovers:
            assert lab.leftovers() == []


def command_request(target: str, command: str, deadline: float = 15.0) -> CommandRequest:
    return CommandRequest(target, DOCUMENT, deadline, {"command": [command]})


def wait_for(check: Callable[[], bool], timeout: float, interval: float = 0.2) -> float:
    """Seconds until ``check()`` was true; fails the test after ``timeout``."""
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > timeout:
            pytest.fail(f"condition not met within {timeout} s")
        time.sleep(interval)
    return time.monotonic() - started


def show_cluster(lab: Lab, host: str) -> subprocess.CompletedProcess[str]:
    return lab.exec(
        host, ["sacctmgr", "-n", "-P", "show", "cluster", "format=cluster,controlhost,controlport"]
    )


def netns() -> list[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
    return [line.split()[0] for line in listed.splitlines() if line.strip()]


def lab_databases(topology: Topology) -> list[str]:
    connection = AdminConnection().connect()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SHOW DATABASES LIKE %s", (topology.db_name,))
            found = [row[0] for row in cursor.fetchall()]
            user = topology.db_user.replace("_", "\\_")
            cursor.execute("SELECT user FROM mysql.user WHERE user LIKE %s", (f"{user}%",))
            return found + [row[0] for row in cursor.fetchall()]
    finally:
        connection.close()


def process_state(pid: int) -> str | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw[raw.rfind(")") + 2 :].split()[0]


def pid_running(pid: int | None) -> bool:
    return pid is not None and process_state(pid) not in (None, "Z", "X")


def processes() -> list[tuple[int, str]]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and pid_running(int(entry.name)):
            found.append((int(entry.name), command_name(int(entry.name)) or ""))
    return found


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
