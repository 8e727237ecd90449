"""A controller's slurm.conf drifting from the shared copy, made for real, and put right.

Every lab host reads ``/etc/slurm/slurm.conf``, a link to the shared copy (HyperPod links
``/opt/slurm/etc/slurm.conf`` to the copy on FSx). GNU ``sed -i`` on that path writes a new
file and renames it over the link: the host is left with a local copy, as HyperPod's
``start_slurm.sh`` can leave a controller. The drift is made exactly so, by ``sed -i`` run on the
host, and put right by linking the shared copy again.

A drifted slurm.conf matters when slurmctld reads it: HyperPod's script edits the file before
slurmctld starts. Here the running slurmctld is told to read it again with SIGHUP (what
``scontrol reconfigure`` does on that daemon): a standby re-reads its configuration in place, the
active controller reconfigures (24.11 restarts itself in place) and keeps control. A restart
would do it too, but a restarted primary can lose control to a backup and slurmdbd's
registration with it; the fault must change the configuration only. A slurmctld that does not
run reads the file when it starts; a stopped (SIGSTOP) one is refused by the fault's check.
"""

from __future__ import annotations

import signal
import time
from typing import Final

from hyperpod_ha.observability import logger
from hyperpod_lab.daemon_control import LabDaemons
from hyperpod_lab.processes import LabError, stopped
from hyperpod_lab.topology import SLURMCTLD_TIMEOUT_SECONDS

CONF: Final = "/etc/slurm/slurm.conf"  # where every lab host reads it (its own /etc/slurm)
# conf-drift's changed value: a standby that would wait longer than the others to take over.
DRIFTED_SLURMCTLD_TIMEOUT: Final = SLURMCTLD_TIMEOUT_SECONDS + 10
RECONFIGURED: Final = "Reconfigure signal (SIGHUP) received"
REREAD_SECONDS: Final = 60.0


class LabConfDrift(LabDaemons):
    def drift_conf(self, controller: str) -> str:
        """``sed -i`` changes SlurmctldTimeout in the controller's slurm.conf (a local copy now)."""
        value = f"SlurmctldTimeout={DRIFTED_SLURMCTLD_TIMEOUT}"
        self._sed(controller, f"s/^SlurmctldTimeout=.*/{value}/")
        return f"{CONF} on {controller} a local copy with {value}; {self._reread(controller)}"

    def drop_primary_programs(self, controller: str) -> str:
        """``sed -i`` deletes SlurmctldPrimaryOnProg/OffProg from the controller's slurm.conf."""
        self._sed(controller, "/^SlurmctldPrimaryO[nf]*Prog=/d")
        return (
            f"{CONF} on {controller} a local copy without SlurmctldPrimaryOnProg/OffProg; "
            f"{self._reread(controller)}"
        )

    def share_conf(self, controller: str) -> str:
        """The controller's slurm.conf the link to the shared copy again, read again."""
        self._on(controller, ["ln", "-sfn", str(self.paths.slurm_conf), CONF])
        return f"{CONF} on {controller} the link to the shared copy again; {self._reread(controller)}"

    def _sed(self, controller: str, expression: str) -> None:
        # GNU sed -i does not follow a link (no --follow-symlinks): it replaces it with a file.
        self._on(controller, ["sed", "-i", "-e", expression, CONF])

    def _on(self, controller: str, argv: list[str]) -> None:
        host = self.topology.controller(controller)
        done = self.exec(host.name, argv, timeout=15)
        if done.returncode != 0:
            raise LabError(f"{argv[0]} on {host.name} failed: {(done.stderr or done.stdout).strip()[:200]}")

    def _reread(self, controller: str) -> str:
        """SIGHUP to the controller's slurmctld, then wait until it logged the signal and answers."""
        host = self.topology.controller(controller)
        pid = self.pid(host.name, "slurmctld")
        if pid is None or stopped(pid):
            return "slurmctld does not run there: it reads slurm.conf when it starts"
        log = self.paths.log(host.name, "slurmctld")
        offset = log.stat().st_size if log.exists() else 0
        self.kill_slurmctld(host.name, signal.SIGHUP)

        def reread() -> bool:
            with log.open("rb") as handle:
                handle.seek(offset)
                seen = RECONFIGURED.encode() in handle.read()
            return seen and self._controller_up(host.name, host)

        started = time.monotonic()
        self._wait(reread, started + REREAD_SECONDS, f"slurmctld on {host.name} to read slurm.conf again")
        seconds = time.monotonic() - started
        logger.info("slurmctld read slurm.conf again", extra={"controller": host.name, "seconds": seconds})
        return f"its slurmctld read it again (SIGHUP, answered after {seconds:.1f} s)"
