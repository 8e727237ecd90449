"""Signalling, stopping and starting the lab's slurmctld and slurmdbd."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from functools import partial

from hyperpod_ha.observability import logger
from hyperpod_lab.processes import (
    LabError,
    send,
    wait_gone,
)
from hyperpod_lab.readiness import LabReadiness
from hyperpod_lab.topology import (
    Host,
)


class LabDaemons(LabReadiness):
    def kill_slurmctld(self, controller: str, sig: signal.Signals = signal.SIGKILL) -> int:
        """Send ``sig`` to the controller's slurmctld; for KILL/TERM wait until it is gone."""
        self.topology.controller(controller)
        pid = self.pid(controller, "slurmctld")
        if pid is None or not send(pid, sig, expect="slurmctld"):
            raise LabError(f"slurmctld does not run on {controller}")
        if sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT) and wait_gone([pid], 15.0):
            raise LabError(f"slurmctld on {controller} did not exit after {sig.name}")
        logger.info("signalled slurmctld", extra={"controller": controller, "signal": sig.name, "pid": pid})
        return pid

    def stop_slurmctld(self, controller: str) -> int:
        """SIGSTOP: a hung controller (the process stays, answers nothing)."""
        return self.kill_slurmctld(controller, signal.SIGSTOP)

    def cont_slurmctld(self, controller: str) -> int:
        """SIGCONT: the hung controller resumes."""
        return self.kill_slurmctld(controller, signal.SIGCONT)

    def start_slurmctld(self, controller: str, *, wait: bool = True, timeout: float = 30.0) -> int:
        """Start the controller's slurmctld (again); with ``wait``, until it answers pings."""
        host = self.topology.controller(controller)
        return self._restart(host, "slurmctld", wait, timeout, lambda: self._controller_up(host.name, host))

    def stop_slurmdbd(self, controller: str | None = None) -> list[int]:
        """Stop slurmdbd (SIGTERM) on one controller, or on all of them."""
        stopped = []
        for host in self._controllers(controller):
            pid = self.pid(host.name, "slurmdbd")
            if pid is not None and send(pid, signal.SIGTERM, expect="slurmdbd"):
                stopped.append(pid)
        if wait_gone(stopped, 15.0):
            raise LabError("slurmdbd did not exit after SIGTERM")
        return stopped

    def start_slurmdbd(
        self, controller: str | None = None, *, wait: bool = True, timeout: float = 30.0
    ) -> list[int]:
        """Start slurmdbd on one controller or all; with ``wait``, until ``sacctmgr`` answers there.

        A slurmdbd reads its slurmdbd.conf when it starts: this is how a changed
        ``StoragePass`` takes effect.
        """
        return [
            self._restart(host, "slurmdbd", wait, timeout, partial(self._dbd_answers, host))
            for host in self._controllers(controller)
        ]

    def _restart(
        self, host: Host, daemon: str, wait: bool, timeout: float, ready: Callable[[], object]
    ) -> int:
        state = self._running_state()
        pid = self.pid(host.name, daemon)
        if pid is None:
            pid = self._start_daemon(state, host, daemon)
            logger.info("started daemon", extra={"host": host.name, "daemon": daemon, "pid": pid})
        if wait:
            self._wait(ready, time.monotonic() + timeout, f"{daemon} on {host.name}")
        return pid
