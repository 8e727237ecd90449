"""A Slurm user's text in slurmctld's log, written the way any user of the cluster can (issue 35).

slurmctld logs a job's partition string when it knows no such partition, at its default level,
on the active controller: ``[time] _get_job_parts: invalid partition specified: <text>`` (Slurm's
src/slurmctld/job_mgr.c; seen on the lab's 25.11.7). The ``forged-log`` fault submits, as an
ordinary user (``nobody``) on a compute node, one job per phrase the verdict reads from that log,
each phrase as the job's partition: as the phrase alone, and after a carriage return and a
forged time (``x\\r[<now>] <phrase>``). Every submission is refused (no such partition), so
nothing runs and nothing needs repairing; the phrases stay in the log. A verdict that read them
would call a healthy cluster DOWN.
"""

from __future__ import annotations

import subprocess
import time
from typing import Final

from hyperpod_ha.observability import logger
from hyperpod_lab.hosts import LabHosts
from hyperpod_lab.processes import LabError

# An ordinary user: every Debian system has it, and Slurm takes its job (as far as the partition).
FORGING_USER: Final = "nobody"
FORGING_GROUP: Final = "nogroup"
# Every phrase the verdict reads from slurmctld's log, as slurmctld itself logs it (roles,
# takeover, stop and start, the 24.11 standby's refusals, a fatal error), and the bare parts the
# probe once matched anywhere in a line.
FORGED_PHRASES: Final = (
    "Running as primary controller",
    "slurmctld running in background mode",
    "error: ControlMachine ctl1 not responding, BackupController1 ctl2 taking over",
    "not responding, BackupController",
    "Terminate signal SIGTERM received",
    "slurmctld version 25.11.7 started on cluster lab(1)",
    "error: Not taking control. Primary slurmctld is unresponsive, but heartbeat file could not be read. "
    "Something is wrong with your StateSaveLocation.",
    "error: Not taking control. Primary slurmctld is unresponsive, but is still updating the heartbeat "
    "file. Check for clock skew.",
    "error: Not taking control. Primary slurmctld is unresponsive, but not yet able to determine if "
    "primary may actually be running.",
    "warning: Waiting for heartbeat file to exist...",
    "fatal: No Assoc usage file (/srv/hplab/shared/state/assoc_usage) to recover",
)
# sbatch's answer to a job whose partition does not exist: the job reached slurmctld.
REFUSED: Final = "invalid partition"
JOB_NAME: Final = "hyperpod-lab-forged-log"
SUBMIT_SECONDS: Final = 20.0


def forged_partitions(now: float) -> list[str]:
    """The partition strings to submit: each phrase alone, and after a carriage return and a
    forged slurmctld time (local, with milliseconds, as the log file's lines begin)."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(now)) + f".{int(now * 1000) % 1000:03d}"
    return [*FORGED_PHRASES, *(f"x\r[{stamp}] {phrase}" for phrase in FORGED_PHRASES)]


def submit_argv(partition: str) -> list[str]:
    """``sbatch`` of a job that only runs ``true``, as the ordinary user, with ``partition`` as
    one argument (no shell: the text reaches Slurm as it is)."""
    return [
        "setpriv",
        f"--reuid={FORGING_USER}",
        f"--regid={FORGING_GROUP}",
        "--clear-groups",
        "--",
        "sbatch",
        "--chdir=/tmp",
        "--output=/dev/null",
        f"--job-name={JOB_NAME}",
        f"--partition={partition}",
        "--wrap=true",
    ]


class LabForgedLog(LabHosts):
    def forge_log(self, host: str) -> str:
        """Submit the forged jobs from compute node ``host``; each must be refused by slurmctld
        for its partition (:class:`LabError` otherwise: the text would not be in the log)."""
        node = self.topology.host(host)
        if node.role != "compute":
            raise LabError(f"forged-log submits as a user of a compute node; {host} is a controller")
        partitions = forged_partitions(time.time())
        for partition in partitions:
            try:
                done = self.exec(node.name, submit_argv(partition), timeout=SUBMIT_SECONDS)
            except subprocess.TimeoutExpired:
                raise LabError(f"sbatch on {host} did not answer within {SUBMIT_SECONDS:g} s") from None
            said = (done.stderr + done.stdout).strip()
            if done.returncode == 0 or REFUSED not in said.lower():
                tail = " | ".join(said.splitlines()[-2:])[:200]
                raise LabError(
                    f"sbatch as {FORGING_USER} on {host} was not refused for its partition: {tail}"
                )
        logger.info("forged slurmctld log lines", extra={"host": host, "jobs": len(partitions)})
        return (
            f"{len(partitions)} jobs submitted as {FORGING_USER} on {host}, each refused for its "
            "partition: a phrase the verdict reads, alone or after a carriage return and a forged time"
        )
