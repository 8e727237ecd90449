"""What the lab is: up, its controllers, its logs, the heartbeat, its status."""

from __future__ import annotations

import os
import time

from hyperpod_lab.hosts import LabHosts
from hyperpod_lab.lab_state import HEARTBEAT_READS, Heartbeat, read_state
from hyperpod_lab.processes import (
    stopped,
    thread_count,
)


class LabQueries(LabHosts):
    def is_up(self) -> bool:
        state = read_state(self.topology.root)
        return state is not None and state.ready

    def controllers(self) -> list[dict[str, str]]:
        """The controller group as the workflow's discovery reports it (empty when down)."""
        if not self.is_up():
            return []
        return [
            {
                "instance_id": host.instance_id,
                "group": host.group,
                "status": "Running",
                "private_ip": host.address,
                "hostname": host.name,
                "target": host.target,
            }
            for host in self.topology.controller_hosts
        ]

    def log(self, host: str, daemon: str = "slurmctld") -> str:
        self.topology.host(host)
        try:
            # Bytes, decoded as they are: a carriage return in a line (a user's text, issue 35) is
            # text, as the probe reads it, not a line break (read_text's universal newlines).
            return self.paths.log(host, daemon).read_bytes().decode(errors="replace")
        except FileNotFoundError:
            return ""

    def heartbeat(self) -> Heartbeat | None:
        for attempt in range(HEARTBEAT_READS):
            if attempt:
                time.sleep(0.05)
            try:
                with self.paths.heartbeat.open("rb") as handle:
                    raw = handle.read()
                    mtime = os.fstat(handle.fileno()).st_mtime
            except FileNotFoundError:
                continue
            return Heartbeat.parse(raw, mtime)
        return None

    def controller_status_messages(self) -> list[str]:
        """What the ON/OFF programs wrote, oldest first ("<UTC time> Slurm Controller is ON, ...")."""
        try:
            return self.paths.controller_status_log.read_text(errors="replace").splitlines()
        except FileNotFoundError:
            return []

    def conf_is_shared(self, controller: str) -> bool:
        """Whether the controller's slurm.conf is the link to the shared copy (:mod:`.conf_drift`)."""
        link = self.paths.host_etc(self.topology.controller(controller).name) / "slurm.conf"
        return link.is_symlink() and os.readlink(link) == str(self.paths.slurm_conf)

    def local_conf_hosts(self) -> list[str]:
        """The controllers whose slurm.conf is not the link to the shared copy (conf-drift, onprog-off)."""
        return [host.name for host in self.topology.controller_hosts if not self.conf_is_shared(host.name)]

    def status(self) -> dict[str, object]:
        state = read_state(self.topology.root)
        hosts: dict[str, object] = {}
        for host in self.topology.hosts:
            daemons = {}
            for daemon in host.daemons:
                pid = self.pid(host.name, daemon)
                daemons[daemon] = {
                    "pid": pid,
                    "stopped": pid is not None and stopped(pid),
                    "threads": thread_count(pid) if pid else None,
                }
            holder = state.holders.get(host.name) if state else None
            hosts[host.name] = {
                "address": host.address,
                "instance_id": host.instance_id,
                "running": self._is_holder(holder),
                "isolated": bool(state and host.name in state.isolated),
                "daemons": daemons,
            }
        beat = self.heartbeat()
        return {
            "up": bool(state and state.ready),
            "root": str(self.topology.root),
            "topology": self.topology.to_json(),
            "hosts": hosts,
            "state_read_only": bool(state and state.read_only),
            "state_read_only_hosts": list(state.read_only) if state else [],
            "heartbeat_hidden_hosts": list(state.heartbeat_hidden) if state else [],
            "local_slurm_conf_hosts": self.local_conf_hosts() if state else [],
            "heartbeat": None
            if beat is None
            else {"beat_time": beat.beat_time, "writer_index": beat.writer_index, "mtime": beat.mtime},
            "controllers": self.controllers(),
        }
