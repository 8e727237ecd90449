"""Removing the lab, and finding what is left of one. Teardown works from ``<root>/lab.json`` and
from what the lab's network namespaces hold, so it also cleans up after a failed or interrupted set-up."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

from hyperpod_ha.observability import logger
from hyperpod_lab import accounting_db, machine, network
from hyperpod_lab.hosts import LabHosts
from hyperpod_lab.lab_state import read_state
from hyperpod_lab.processes import (
    LabError,
    cmdline,
    command_name,
    kill_all,
    run,
    running_pids,
)
from hyperpod_lab.releases import BUILD_ROOT
from hyperpod_lab.topology import MAX_SLOT, PREFIX, Topology, slot_root

# Any of these running means a lab (or a piece of one) is still there.
_SLURM_PROGRAMS = frozenset({"slurmdbd", "slurmctld", "slurmd", "slurmstepd"})
# Every lab's namespaces: hplab-ctl1 (slot 0), hplab3-ctl1 (slot 3), ...
_LAB_NETNS = re.compile(rf"^{PREFIX}[0-9]*-")
# Where the lab's Slurm daemons come from: its builds, or Debian's packages (22.05).
_DEBIAN_SLURM_DIRS = (Path("/usr/sbin"), Path("/usr/bin"))


class LabTeardown(LabHosts):
    def down(self) -> list[str]:
        """Stop everything the lab started and remove everything it created. Idempotent.
        Another lab of the machine (another slot) is left as it is."""
        started = time.monotonic()
        state = read_state(self.topology.root)
        removed: list[str] = []
        pids: set[int] = set()
        for netns in network.namespaces(self.topology):
            pids.update(network.namespace_pids(netns))
        if state is not None:
            # Daemons run in the hosts' namespaces; a holder outlives a deleted namespace.
            pids.update(pid for pid in state.holders.values() if self._is_holder(pid))
        # Nothing of the lab survives teardown, so a graceful stop buys nothing; killing a
        # host's holder (PID 1 of its PID namespace) also ends whatever else runs there.
        removed += [f"process {pid}" for pid in kill_all(pids)]
        removed += network.destroy(self.topology)
        errors = []
        try:
            removed += accounting_db.drop(self.admin, self.topology)
        except LabError as exc:
            errors.append(exc.reason)
        if self.topology.root.exists():
            shutil.rmtree(self.topology.root)
            removed.append(f"directory {self.topology.root}")
        with machine.machine_lock():
            removed += machine.release(self.topology)
        logger.info(
            "lab down", extra={"seconds": round(time.monotonic() - started, 2), "removed": len(removed)}
        )
        if errors:
            raise LabError("; ".join(errors))
        return removed

    def leftovers(self) -> list[str]:
        """Anything of this lab that exists now (empty after :meth:`down`), and what the labs
        share on the machine when no other lab is up."""
        found = [f"netns {name}" for name in network.namespaces(self.topology)]
        found += [f"link {name}" for name in network.links(self.topology)]
        found += accounting_db.leftovers(self.admin, self.topology)
        if self.topology.root.exists():
            found.append(f"directory {self.topology.root}")
        found += [f"process {pid} {name}" for pid, name in lab_processes(self.topology)]
        if not machine.other_labs(self.topology) and machine.MUNGE_DIR.exists():
            found.append(f"directory {machine.MUNGE_DIR}")
        return found


def lab_processes(topology: Topology) -> list[tuple[int, str]]:
    """Processes (not zombies) that belong to the lab: in its namespaces, naming its root, or
    a Slurm daemon of the lab's builds or Debian's that escaped its host. A daemon's
    environment names its lab (its host's PATH holds ``<root>/bin``); one naming none counts
    when it runs outside every other lab's namespaces. A process only named like one (a
    test's stand-in) does not."""
    ours: set[int] = set()
    theirs: set[int] = set()
    for netns in _all_lab_namespaces():
        (ours if netns.startswith(f"{topology.prefix}-") else theirs).update(network.namespace_pids(netns))
    found = []
    for pid in running_pids():
        name = command_name(pid) or "?"
        if pid == os.getpid():
            continue
        if pid in ours or _names_root(cmdline(pid), topology.root):
            found.append((pid, name))
        elif name in _SLURM_PROGRAMS and _slurm_binary(pid):
            # Another lab tearing down kills its daemons after its namespaces are listed, or
            # after they are deleted: the environment, not the namespace, says whose they are.
            environ = _environ(pid)
            named = [root for root in _lab_roots() if _names_root(environ, root)]
            if topology.root in named or (not named and pid not in theirs):
                found.append((pid, name))
    return found


def _names_root(text: str, root: Path) -> bool:
    """Whether ``text`` names a path under ``root`` (``/srv/hplab`` is not ``/srv/hplab4``)."""
    return re.search(rf"{re.escape(str(root))}(?:[/:\s]|$)", text) is not None


def _lab_roots() -> list[Path]:
    return [slot_root(slot) for slot in range(MAX_SLOT + 1)]


def _environ(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _slurm_binary(pid: int) -> bool:
    try:
        executable = Path(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        return False
    return executable.is_relative_to(BUILD_ROOT) or executable.parent in _DEBIAN_SLURM_DIRS


def _all_lab_namespaces() -> list[str]:
    listed = run(["ip", "-json", "netns", "list"]).stdout.strip()
    return [entry["name"] for entry in json.loads(listed or "[]") if _LAB_NETNS.match(entry["name"])]
