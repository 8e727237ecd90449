"""Whether the lab's daemons answer: munge, slurmdbd, the registration, ping, idle nodes, a job."""

from __future__ import annotations

import subprocess

from hyperpod_lab import config
from hyperpod_lab.hosts import LabHosts
from hyperpod_lab.topology import (
    CLUSTER_NAME,
    Host,
)


class LabReadiness(LabHosts):
    def _munge_answers(self, host: Host) -> bool:
        done = self.exec(host.name, ["sh", "-c", "munge -n | unmunge"], timeout=10)
        return done.returncode == 0

    def _dbd_answers(self, host: Host) -> bool:
        done = self.exec(host.name, ["sacctmgr", "-n", "-P", "show", "cluster", "format=cluster"], timeout=10)
        return done.returncode == 0

    def _registered(self) -> bool:
        done = self.exec(
            self.topology.controller_hosts[0].name,
            ["sacctmgr", "-n", "-P", "show", "cluster", "format=cluster,controlport"],
            timeout=10,
        )
        return done.stdout.strip() == f"{CLUSTER_NAME}|{config.SLURMCTLD_PORT}"

    def _ping(self, from_host: str) -> dict[str, str]:
        """host -> UP/DOWN, as ``scontrol ping`` on ``from_host`` reports it."""
        try:
            done = self.exec(from_host, ["scontrol", "ping"], timeout=10)
        except subprocess.TimeoutExpired:
            # A controller taking control (back) may answer nobody for a while.
            return {}
        states = {}
        for line in done.stdout.splitlines():
            words = line.split()
            if line.startswith("Slurmctld(") and len(words) >= 5:
                states[words[2]] = words[4]
        return states

    def _controller_up(self, from_host: str, host: Host) -> bool:
        return self._ping(from_host).get(host.name) == "UP"

    def _controllers_answer(self) -> bool:
        states = self._ping(self.topology.controller_hosts[0].name)
        return all(states.get(host.name) == "UP" for host in self.topology.controller_hosts)

    def _nodes_idle(self) -> bool:
        done = self.exec(
            self.topology.controller_hosts[0].name, ["sinfo", "-h", "-N", "-o", "%N %T"], timeout=10
        )
        states = dict(line.split() for line in done.stdout.splitlines() if len(line.split()) == 2)
        return done.returncode == 0 and all(states.get(h.name) == "idle" for h in self.topology.compute_hosts)

    def _job_runs(self) -> bool:
        # Nodes that just turned idle may still lose a job's I/O: a real job is the proof.
        nodes = self.topology.compute_hosts
        try:
            done = self.exec(
                self.topology.controller_hosts[0].name,
                ["srun", f"--nodes={len(nodes)}", "--ntasks-per-node=1", "hostname"],
                timeout=10,
            )
        except subprocess.TimeoutExpired:
            return False
        return done.returncode == 0 and sorted(done.stdout.split()) == sorted(h.name for h in nodes)
