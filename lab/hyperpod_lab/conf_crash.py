"""A configuration every controller dies on at start, written into the shared slurm.conf, and healed.

As HyperPod's cluster agent can do (the 2026 topology roll-out): ``conf-crash`` appends
``TopologyPlugin=topology/tree`` to the shared slurm.conf, with no topology.conf beside it, and
restarts the given controller's slurmctld. slurmctld loads the topology plugin when it reads
its configuration as the controller in control (``read_slurm_conf``: at a primary's start, at a
backup's takeover), retries the missing file for 60 s (``s_p_parse_file``, Slurm 24.11) and
exits with ``fatal: something wrong with opening/reading /etc/slurm/topology.conf``. Restarted,
the primary dies so; the backup then takes over and dies the same way: every controller that
starts dies, and the shared copy stays one (no drift). Slurm's clients do not load the plugin, so
the hosts stay checkable. ``conf-shared`` writes the lab's slurm.conf back and starts slurmctld
again where it does not run, the primary first.
"""

from __future__ import annotations

import signal
import time
from typing import Final

from hyperpod_ha.observability import logger
from hyperpod_lab import config
from hyperpod_lab.daemon_control import LabDaemons
from hyperpod_lab.processes import LabError, wait_gone

CRASH_SETTING: Final = "TopologyPlugin=topology/tree\n"
FATAL: Final = "something wrong with opening/reading"
# 24.11 retries a missing file for 60 s before its fatal line.
EXIT_SECONDS: Final = 90.0


class LabConfCrash(LabDaemons):
    def conf_crash_in_place(self) -> bool:
        """The shared slurm.conf holds the setting every controller dies on."""
        try:
            return CRASH_SETTING in self.paths.slurm_conf.read_text()
        except OSError:
            return False

    def conf_crash(self, controller: str) -> str:
        """The setting appended to the shared slurm.conf, the controller's slurmctld restarted and
        waited for until it exits."""
        host = self.topology.controller(controller)
        with self.paths.slurm_conf.open("a") as shared:
            shared.write(CRASH_SETTING)
        if self.pid(host.name, "slurmctld") is not None:
            self.kill_slurmctld(host.name, signal.SIGKILL)
        log = self.paths.log(host.name, "slurmctld")
        offset = log.stat().st_size if log.exists() else 0
        started = time.monotonic()
        try:
            pid = self.start_slurmctld(host.name, wait=False)
        except LabError as exited:  # gone before the lab saw it run
            logger.info("slurmctld exited at once", extra={"controller": host.name, "reason": exited.reason})
        else:
            if wait_gone([pid], EXIT_SECONDS):
                raise LabError(f"slurmctld on {host.name} still runs {EXIT_SECONDS:g} s after its start")
        seconds = time.monotonic() - started
        with log.open("rb") as handle:
            handle.seek(offset)
            said = FATAL.encode() in handle.read()
        words = f"logged '{FATAL} ...topology.conf'" if said else "without the fatal line in its log"
        # A backup takes over from the dead primary, reads the configuration and dies the same way.
        running = (self.pid(h.name, "slurmctld") for h in self.topology.controller_hosts)
        others = [pid for pid in running if pid is not None]
        alive = wait_gone(others, EXIT_SECONDS) if others else []
        after = (
            f"; {len(others) - len(alive)} of the other {len(others)} slurmctld exited too" if others else ""
        )
        return (
            f"the shared slurm.conf has {CRASH_SETTING.strip()} without a topology.conf; slurmctld on "
            f"{host.name} killed, started again, exited {seconds:.1f} s later {words}{after}"
        )

    def heal_conf_crash(self) -> str:
        """The lab's slurm.conf written back; slurmctld started where it does not run, primary first."""
        self.paths.slurm_conf.write_text(config.slurm_conf(self.topology))
        started = []
        for host in self.topology.controller_hosts:
            if self.pid(host.name, "slurmctld") is None:
                self.start_slurmctld(host.name, wait=host is self.topology.controller_hosts[0])
                started.append(host.name)
        return (
            f"the shared slurm.conf is the lab's again; slurmctld started on {', '.join(started) or 'none'}"
        )
