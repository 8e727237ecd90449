"""slurmctld's log lines with a user's text in them, and the phrases the verdict reads.

slurmctld logs users' text inside its messages at its default level (seen on the lab's Slurm
25.11.7: ``sbatch -p "<text>"`` left ``[ts] _get_job_parts: invalid partition specified: <text>``
in the active controller's log). The message starts are Slurm 25.11.7's own
(``src/slurmctld/job_mgr.c``), each followed by text the user chose.
"""

from __future__ import annotations

from typing import Final

# The time and origin of a line, as slurmctld writes them: the log file (LogTimeFormat with and
# without milliseconds), the journal (syslog) and the journal of a slurmctld -D under systemd.
HEADERS: Final = (
    "[2026-11-29T23:39:57.004] ",
    "[2026-11-29T23:39:57] ",
    "2026-11-29T23:39:57+0000 ctl1 slurmctld[7841]: ",
    "2026-11-29T23:39:57+00:00 ctl1 slurmctld[7841]: [2026-11-29T23:39:57.004] ",
)
# Messages that carry a user's text after their start (the first is the issue's).
USER_TEXT_STARTS: Final = (
    "_get_job_parts: invalid partition specified: ",
    "Invalid qos (",
    "error: _job_create: invalid wckey '",
    "_slurm_rpc_kill_job: invalid JobId=",
    "sched: update_job_str: invalid licenses: ",
)
# Every phrase a verdict reads from the log, whole messages as slurmctld logs them.
PHRASES: Final = (
    "Running as primary controller",
    "slurmctld running in background mode",
    "error: ControlMachine ctl1 not responding, BackupController1 ctl2 taking over",
    "ControlMachine ctl1 not responding, BackupController1 ctl2 taking over",
    "Terminate signal SIGTERM received",
    "Terminate signal (SIGINT or SIGTERM) received",
    "slurmctld version 25.11.7 started on cluster lab(2015)",
    "error: Not taking control. Primary slurmctld is unresponsive, but heartbeat file could not be read. "
    "Something is wrong with your StateSaveLocation.",
    "error: Not taking control. Primary slurmctld is unresponsive, but is still updating the heartbeat "
    "file. Check for clock skew.",
    "error: Not taking control. Primary slurmctld is unresponsive, but not yet able to determine if "
    "primary may actually be running.",
    "warning: Waiting for heartbeat file to exist...",
    "fatal: No Assoc usage file (/srv/hplab/shared/state/assoc_usage) to recover",
)
