"""The lab's Slurm configuration, shaped like HyperPod's multi-head set-up.

As on HyperPod, slurm.conf and cgroup.conf are shared (here under ``shared/etc``, there on
FSx for Lustre) and every controller runs its own slurmdbd with its own local slurmdbd.conf
holding ``StoragePass``; ``AccountingStorageHost=localhost`` makes each slurmctld (and each
``sacctmgr`` run on a controller) talk to the slurmdbd of its own host. All slurmdbds share
one database, so who registered as the cluster's controller is the same answer everywhere.
"""

from __future__ import annotations

import shlex
import string
from collections.abc import Mapping

from hyperpod_lab.topology import (
    CLUSTER_NAME,
    SLURMCTLD_TIMEOUT_SECONDS,
    Host,
    LabConfigError,
    Topology,
)

SLURMDBD_PORT = 6819
SLURMCTLD_PORT = 6817

# Slurm's config parser treats '#' as a comment and splits on blanks; quotes and
# backslashes are escapes. A password using them would be read back altered.
_PASSWORD_ALPHABET = frozenset(string.ascii_letters + string.digits + "!$%&()*+,-./:;<=>?@[]^_{|}~")
_PASSWORD_MIN, _PASSWORD_MAX = 8, 128


def check_db_password(password: str) -> None:
    """Reject passwords slurmdbd.conf cannot carry verbatim. The reason never shows the password."""
    if not _PASSWORD_MIN <= len(password) <= _PASSWORD_MAX:
        raise LabConfigError(f"database password must be {_PASSWORD_MIN}..{_PASSWORD_MAX} characters long")
    if not set(password) <= _PASSWORD_ALPHABET:
        raise LabConfigError(
            "database password may only hold printable ASCII without blanks, quotes, backslash or '#'"
        )


def slurm_conf(topology: Topology) -> str:
    local = topology.paths.local
    lines = [
        "# hyperpod-lab: a HyperPod-like Slurm cluster with several controllers on one machine.",
        f"ClusterName={CLUSTER_NAME}",
        *(f"SlurmctldHost={host.name}({host.address})" for host in topology.controller_hosts),
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"StateSaveLocation={topology.paths.state_dir}",
        f"SlurmdSpoolDir={local}/spool",
        f"SlurmctldPidFile={local}/run/slurmctld.pid",
        f"SlurmdPidFile={local}/run/slurmd.pid",
        f"SlurmctldLogFile={local}/log/slurmctld.log",
        f"SlurmdLogFile={local}/log/slurmd.log",
        "SlurmctldDebug=info",
        "SlurmdDebug=info",
        f"SlurmctldPort={SLURMCTLD_PORT}",
        # Small on purpose: a failover shows within seconds instead of the default 120 s.
        f"SlurmctldTimeout={SLURMCTLD_TIMEOUT_SECONDS}",
        # HyperPod's headnode_setup.sh inserts the two programs after this anchor line.
        "# Slurmctld settings",
        f"SlurmctldPrimaryOnProg={topology.paths.primary_program('on')}",
        f"SlurmctldPrimaryOffProg={topology.paths.primary_program('off')}",
        "SlurmdTimeout=30",
        "MessageTimeout=5",
        "ReturnToService=2",
        "MailProg=/bin/true",
        "MpiDefault=none",
        "SchedulerType=sched/backfill",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        # ip netns exec remounts /sys, so no cgroup hierarchy is visible to slurmd.
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/slurmdbd",
        "AccountingStorageHost=localhost",
        f"AccountingStoragePort={SLURMDBD_PORT}",
        # Slurm's floor: while slurmdbd is away, slurmctld drops records after 10,000 (issue 39's
        # job-flood reaches it within minutes; the default here would be 2 x MaxJobCount + 4 x nodes).
        "MaxDBDMsgs=10000",
        # Room for that many pending jobs and more: job-flood's one record per job reaches it.
        "MaxJobCount=20000",
        *(
            f"NodeName={node.name} NodeAddr={node.address} CPUs=1 State=UNKNOWN"
            for node in topology.compute_hosts
        ),
        "PartitionName=dev Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
    ]
    return "\n".join(lines) + "\n"


# What HyperPod's headnode_notification.sh publishes on the failover topic, by program.
PRIMARY_PROGRAM_MESSAGES = {
    "on": "Slurm Controller is ON, ({address}, Primary Node)",
    "off": "Slurm Controller is OFF ({address}, Backup Node)",
}


def primary_program(topology: Topology, status: str) -> str:
    """SlurmctldPrimaryOnProg/OffProg: the message HyperPod's script would publish, appended with
    its UTC time to the shared controller status log (the lab has no topic: scenarios publish
    what the scripts would). slurmctld waits for it, so it only appends a line."""
    message = PRIMARY_PROGRAM_MESSAGES[status].format(address="$address")
    return f"""#!/bin/sh
# hyperpod-lab SlurmctldPrimary{status.capitalize()}Prog (generated; removed by down).
address=$(hostname -i 2>/dev/null | cut -d' ' -f1)
address=${{address:-unknown}}
printf '%s %s\\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "{message}" >>{topology.paths.controller_status_log}
exit 0
"""


def cgroup_conf() -> str:
    # Naming the plugin skips the autodetection that fails without /sys/fs/cgroup.
    return "CgroupPlugin=cgroup/v1\n"


def slurmdbd_conf(topology: Topology, host: Host, password: str) -> str:
    """The controller's local slurmdbd.conf (mode 600): the only file holding the password."""
    local = topology.paths.local
    lines = [
        "AuthType=auth/munge",
        f"DbdHost={host.name}",
        f"DbdPort={SLURMDBD_PORT}",
        "SlurmUser=root",
        "DebugLevel=info",
        f"LogFile={local}/log/slurmdbd.log",
        f"PidFile={local}/run/slurmdbd.pid",
        "StorageType=accounting_storage/mysql",
        # "localhost" makes the MariaDB client use the server's unix socket, which a
        # network namespace does not hide.
        "StorageHost=localhost",
        "StoragePort=3306",
        f"StorageUser={topology.db_user}",
        f"StoragePass={password}",
        f"StorageLoc={topology.db_name}",
    ]
    return "\n".join(lines) + "\n"


def hosts_file(topology: Topology) -> str:
    """/etc/hosts inside every lab host, so names resolve the same without the machine's file."""
    lines = ["127.0.0.1\tlocalhost", f"{topology.login_address}\tlogin"]
    lines += [f"{host.address}\t{host.name}" for host in topology.hosts]
    return "\n".join(lines) + "\n"


def systemctl_shim(topology: Topology, environment: Mapping[str, str]) -> str:
    """``systemctl`` for lab hosts, which have no systemd: the verbs the project's node
    scripts use (``is-active``, ``start``, ``stop``, ``restart``) on the host's own units.

    A unit starts with ``environment`` (the lab's daemons'), not its caller's, as systemd starts
    a unit: a slurmctld the restore starts runs its trigger programs with the same PATH as one
    the lab started.

    It runs inside a host, whose PID namespace holds only that host's processes, so
    ``pgrep`` finds its daemons only; a daemon it starts is reaped by the host's holder. A
    daemon the lab started is the lab process's child: once it exits it stays a zombie until
    that process reaps it, and systemd would not count it as running, so neither does this
    (``pgrep`` matches zombies unless told the run states).
    """
    local = topology.paths.local
    unit_environment = " ".join(shlex.quote(f"{name}={value}") for name, value in sorted(environment.items()))
    return f"""#!/bin/sh
# hyperpod-lab systemctl: the lab hosts' stand-in for systemd (generated; removed by down).
set -u
verb=${{1:-}}
unit=${{2:-}}
unit=${{unit%.service}}
running() {{ pgrep -x -r D,R,S,T,t "$unit" >/dev/null 2>&1; }}
if ! grep -qx "$unit" {local}/units 2>/dev/null; then
  case "$verb" in
    is-active) echo inactive; exit 3 ;;
    *) echo "Unit $unit.service not found." >&2; exit 5 ;;
  esac
fi
stop() {{
  pkill -TERM -x "$unit"
  pkill -CONT -x "$unit"  # as systemd does: a stopped daemon handles SIGTERM once continued
  i=0
  while running; do
    i=$((i + 1))
    [ "$i" -eq 150 ] && pkill -KILL -x "$unit"
    [ "$i" -gt 200 ] && {{ echo "$unit did not stop" >&2; return 1; }}
    sleep 0.1
  done
  return 0
}}
start() {{
  running && return 0
  env -i {unit_environment} setsid "$unit" -D >>{local}/log/"$unit".out 2>&1 </dev/null &
  return 0
}}
case "$verb" in
  is-active) if running; then echo active; else echo inactive; exit 3; fi ;;
  start) start ;;
  stop) stop ;;
  restart) stop && start ;;
  *) echo "hyperpod-lab systemctl: unsupported: $*" >&2; exit 1 ;;
esac
"""


def units(host: Host) -> str:
    """The daemons (systemd units) a host runs, one per line, for the systemctl stand-in."""
    return "".join(f"{daemon}\n" for daemon in host.daemons)
