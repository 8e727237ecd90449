"""Removing the lab, and finding what is left of one. Teardown works from ``<root>/lab.json`` and
from what the lab's network namespaces hold, so it also cleans up after a failed or interrupted set-up."""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from pathlib import Path

from hyperpod_ha.observability import logger
from hyperpod_lab import accounting_db, munge, network
from hyperpod_lab.hosts import SLURM_ETC, LabHosts
from hyperpod_lab.lab_state import read_state
from hyperpod_lab.processes import (
    LabError,
    cmdline,
    command_name,
    kill_all,
    running_pids,
    terminate,
)

# Any of these running means a lab (or a piece of one) is still there.
_SLURM_PROGRAMS = frozenset({"slurmdbd", "slurmctld", "slurmd", "slurmstepd"})
_MUNGED_GRACE_SECONDS = 2.0


class LabTeardown(LabHosts):
    def down(self) -> list[str]:
        """Stop everything the lab started and remove everything it created. Idempotent."""
        started = time.monotonic()
        state = read_state(self.topology.root)
        removed: list[str] = []
        pids: set[int] = set()
        for netns in network.namespaces():
            pids.update(network.namespace_pids(netns))
        if state is not None:
            # Daemons run in the hosts' namespaces; a holder outlives a deleted namespace.
            pids.update(pid for pid in state.holders.values() if self._is_holder(pid))
        # Nothing of the lab survives teardown, so a graceful stop buys nothing; killing a
        # host's holder (PID 1 of its PID namespace) also ends whatever else runs there.
        removed += [f"process {pid}" for pid in kill_all(pids)]
        if state is not None and state.munged is not None and command_name(state.munged) == "munged":
            terminate([state.munged], _MUNGED_GRACE_SECONDS)
            removed.append(f"munged {state.munged}")
            if state.created_run_munge:
                shutil.rmtree(munge.RUN_DIR, ignore_errors=True)
        if state is not None and state.created_etc_slurm:
            with contextlib.suppress(OSError):
                SLURM_ETC.rmdir()  # only if still empty: the lab's mount point, nothing else
        removed += network.destroy()
        errors = []
        try:
            removed += accounting_db.drop(self.admin)
        except LabError as exc:
            errors.append(exc.reason)
        if self.topology.root.exists():
            shutil.rmtree(self.topology.root)
            removed.append(f"directory {self.topology.root}")
        logger.info(
            "lab down", extra={"seconds": round(time.monotonic() - started, 2), "removed": len(removed)}
        )
        if errors:
            raise LabError("; ".join(errors))
        return removed

    def leftovers(self) -> list[str]:
        """Anything of a lab that exists now (empty after :meth:`down`)."""
        found = [f"netns {name}" for name in network.namespaces()]
        found += [f"link {name}" for name in network.links()]
        found += accounting_db.leftovers(self.admin)
        if self.topology.root.exists():
            found.append(f"directory {self.topology.root}")
        found += [f"process {pid} {name}" for pid, name in lab_processes(self.topology.root)]
        return found


def lab_processes(root: Path) -> list[tuple[int, str]]:
    """Processes (not zombies) that belong to a lab: in a lab namespace, naming its root, or Slurm's."""
    in_lab_netns = set()
    for netns in network.namespaces():
        in_lab_netns.update(network.namespace_pids(netns))
    found = []
    for pid in running_pids():
        name = command_name(pid) or "?"
        if pid != os.getpid() and (
            pid in in_lab_netns or str(root) in cmdline(pid) or name in _SLURM_PROGRAMS
        ):
            found.append((pid, name))
    return found
