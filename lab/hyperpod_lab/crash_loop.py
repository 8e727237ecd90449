"""A controller whose slurmctld dies again at every start, made for real, and put right.

slurmctld reads ``acct_gather.conf`` beside slurm.conf when it starts, primary or backup alike
(``acct_gather_conf_init`` runs before it decides its role), and exits on a line it does not
know: ``fatal: Could not open/read/parse acct_gather.conf file ...`` (Slurm's
src/interfaces/acct_gather.c). Slurm's clients (scontrol, sinfo, sacctmgr) never read that
file, so the host stays checkable: only its slurmctld cannot start. ``crash-loop`` writes such
a file into the controller's own ``/etc/slurm`` (not the shared slurm.conf: no drift is made),
kills its slurmctld and starts it once, to show it exits; ``crash-fixed`` removes the file and
starts slurmctld again.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Final

from hyperpod_ha.observability import logger
from hyperpod_lab.daemon_control import LabDaemons
from hyperpod_lab.processes import LabError, wait_gone

CRASH_FILE: Final = "acct_gather.conf"
# An option no acct_gather plugin defines: slurmctld refuses the whole file.
CRASH_LINE: Final = "HyperpodLabCrashLoop=yes\n"
FATAL: Final = "Could not open/read/parse acct_gather.conf"
EXIT_SECONDS: Final = 30.0


class LabCrashLoop(LabDaemons):
    def crash_file(self, controller: str) -> Path:
        return self.paths.host_etc(self.topology.controller(controller).name) / CRASH_FILE

    def crash_loop_hosts(self) -> list[str]:
        """The controllers whose slurmctld exits at start (``crash-loop``)."""
        return [host.name for host in self.topology.controller_hosts if self.crash_file(host.name).exists()]

    def crash_loop(self, controller: str) -> str:
        """The file slurmctld refuses, its slurmctld killed, then started once: it exits."""
        host = self.topology.controller(controller)
        self.crash_file(host.name).write_text(CRASH_LINE)
        if self.pid(host.name, "slurmctld") is not None:
            self.kill_slurmctld(host.name, signal.SIGKILL)
        log = self.paths.log(host.name, "slurmctld")
        offset = log.stat().st_size if log.exists() else 0
        started = time.monotonic()
        try:
            pid = self.start_slurmctld(host.name, wait=False)
        except LabError as exited:  # gone before the lab saw it run: what the fault makes
            logger.info("slurmctld exited at once", extra={"controller": host.name, "reason": exited.reason})
        else:
            if wait_gone([pid], EXIT_SECONDS):
                raise LabError(f"slurmctld on {host.name} still runs {EXIT_SECONDS:g} s after its start")
        seconds = time.monotonic() - started
        with log.open("rb") as handle:
            handle.seek(offset)
            said = FATAL.encode() in handle.read()
        logger.info("slurmctld exits at start", extra={"controller": host.name, "seconds": seconds})
        words = f"logged '{FATAL}'" if said else "without the fatal line in its log"
        return (
            f"{CRASH_FILE} in {host.name}'s /etc/slurm holds an option slurmctld refuses; its slurmctld "
            f"killed, started again, exited {seconds:.1f} s later {words}"
        )

    def fix_crash_loop(self, controller: str) -> str:
        """The refused file removed, slurmctld started again (not waited for: a 24.11 standby
        answers once it read the heartbeat)."""
        host = self.topology.controller(controller)
        self.crash_file(host.name).unlink(missing_ok=True)
        if self.pid(host.name, "slurmctld") is None:
            self.start_slurmctld(host.name, wait=False)
        return f"{CRASH_FILE} removed from {host.name}'s /etc/slurm; slurmctld started again"
