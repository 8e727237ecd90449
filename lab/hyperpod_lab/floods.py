"""Load from a cluster's users, as it comes before a controller drowns (issue 39): ``rpc-flood``
(concurrent client commands in loops: a held job submitted, then ``squeue``, ``scontrol show
jobs`` and ``sinfo``: the queue grows, each query takes longer) and ``job-flood`` (short jobs
submitted in loops), each from a compute node as an ordinary user (``nobody``), as anyone with a
login could.

Not job arrays: slurmctld queues one accounting record per job it is given (src/slurmctld/
job_mgr.c sends a job's start record at submission), and a pending array is one job however many
tasks it holds, while each task counts toward MaxJobCount; its tasks get records of their own
only as they start, which the lab's two one-CPU nodes do at about one every four seconds on this
shared machine. Arrays filled MaxJobCount with about 2,000 records queued; single jobs queue one
record each (about 75 a second here).

A flood runs in the background, detached from the command that started it, inside the compute
node's own namespaces, bounded in clients and in time (``timeout``: two minutes by default) or
until ``heal`` on that node, which ends every process of its session and cancels the jobs it
submitted. Its record (``<root>/floods/<host>.json``) says what runs where and until when.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from hyperpod_lab.hosts import LabHosts
from hyperpod_lab.processes import LabError, alive, running_pids, spawn

FLOOD_USER: Final = "nobody"
FLOOD_GROUP: Final = "nogroup"
FLOOD_JOB_NAME: Final = "hyperpod-lab-job-flood"
FLOOD_SECONDS: Final = 120
MAX_FLOOD_SECONDS: Final = 600
# Concurrent client loops (rpc-flood) and submitting loops (job-flood).
RPC_CLIENTS: Final = 32
JOB_SUBMITTERS: Final = 8
MAX_LOOPS: Final = 64

# $1: loops. Each loop backs off a second when its command fails (a refused
# submission at MaxJobCount, a controller that does not answer): bounded in rate too.
_RPC_SCRIPT: Final = """
for i in $(seq "$1"); do
  ( while :; do
      sbatch --hold --chdir=/tmp --output=/dev/null --job-name=%s --wrap=true >/dev/null 2>&1 &&
        squeue >/dev/null 2>&1 && scontrol show jobs >/dev/null 2>&1 && sinfo >/dev/null 2>&1 || sleep 1
    done ) &
done
wait
"""
_JOB_SCRIPT: Final = """
for i in $(seq "$1"); do
  ( while :; do
      sbatch --chdir=/tmp --output=/dev/null --job-name=%s --wrap=true >/dev/null 2>&1 || sleep 1
    done ) &
done
wait
"""
SCRIPTS: Final = {"rpc-flood": _RPC_SCRIPT % FLOOD_JOB_NAME, "job-flood": _JOB_SCRIPT % FLOOD_JOB_NAME}


@dataclass(frozen=True)
class Flood:
    kind: str
    host: str
    pid: int  # the session leader: every process of the flood is in its session
    started: float
    until: float
    loops: int

    def to_json(self) -> dict[str, object]:
        return dict(self.__dict__)


class LabFloods(LabHosts):
    def flood(
        self,
        host: str,
        kind: str,
        *,
        seconds: int = FLOOD_SECONDS,
        loops: int | None = None,
    ) -> str:
        """Start ``kind`` on compute node ``host`` in the background; what it does, in a line."""
        node = self.topology.host(host)
        if node.role != "compute":
            raise LabError(f"{kind} runs as a user of a compute node; {host} is a controller")
        if kind not in SCRIPTS:
            raise LabError(f"no flood {kind[:40]!r}; known: {', '.join(SCRIPTS)}")
        if not 1 <= seconds <= MAX_FLOOD_SECONDS:
            raise LabError(f"a flood lasts 1-{MAX_FLOOD_SECONDS} s, not {seconds}")
        count = loops if loops is not None else (RPC_CLIENTS if kind == "rpc-flood" else JOB_SUBMITTERS)
        if not 1 <= count <= MAX_LOOPS:
            raise LabError(f"a flood has 1-{MAX_LOOPS} loops")
        running = self.running_flood(host)
        if running is not None:
            raise LabError(f"{running.kind} already runs on {host} (heal {host} first)")
        argv = [
            *self._enter(self.holder(host)),
            "setpriv",
            f"--reuid={FLOOD_USER}",
            f"--regid={FLOOD_GROUP}",
            "--clear-groups",
            "--",
            "timeout",
            "-k",
            "5",
            str(seconds),
            "bash",
            "-c",
            SCRIPTS[kind],
            kind,
            str(count),
        ]
        started = time.time()
        pid = spawn(argv, self.paths.launch_log(host, kind), env=self._host_env())
        flood = Flood(kind, host, pid, started, started + seconds, count)
        path = self._flood_file(host)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(flood.to_json()))
        return f"{count} loops of {kind} as {FLOOD_USER} on {host} for at most {seconds} s (or until heal)"

    def running_flood(self, host: str) -> Flood | None:
        try:
            data = json.loads(self._flood_file(host).read_text())
            flood = Flood(**data)
        except (OSError, ValueError, TypeError):
            return None
        return flood if alive(flood.pid) or _session(flood.pid) else None

    def stop_flood(self, host: str) -> str | None:
        """End the flood on ``host`` (every process of its session) and cancel the jobs it
        submitted; what was stopped, or None when none ran."""
        flood = self.running_flood(host)
        path = self._flood_file(host)
        if flood is None:
            path.unlink(missing_ok=True)
            return None
        for pid in [*_session(flood.pid), flood.pid]:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        path.unlink(missing_ok=True)
        said = f"{flood.kind} on {host} stopped"
        self.client(["scancel", f"--name={FLOOD_JOB_NAME}"], timeout=60)
        return f"{said}, its jobs ({FLOOD_JOB_NAME}) cancelled"
        return said

    def flood_hosts(self) -> list[str]:
        return [host.name for host in self.topology.compute_hosts if self.running_flood(host.name)]

    def _flood_file(self, host: str) -> Path:
        return self.topology.root / "floods" / f"{host}.json"


def _session(leader: int) -> list[int]:
    """The processes of the session ``leader`` started (it may have ended before them)."""
    found = []
    for pid in running_pids():
        with contextlib.suppress(OSError, IndexError):
            raw = Path(f"/proc/{pid}/stat").read_text()
            if int(raw[raw.rfind(")") + 2 :].split()[3]) == leader:
                found.append(pid)
    return found
