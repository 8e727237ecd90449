"""The node the probe ran on: its identity (names, addresses, clock) and its Slurm daemons.

These sections are the probe's own lines (``hostname=``, ``systemctl <daemon> <state>``,
``process <daemon> pid=...``), not a Slurm command's output.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from hyperpod_ha.slurm.text import integer, key_values, nonempty_lines, yes_no


@dataclass(frozen=True)
class NodeIdentity:
    hostname: str | None
    fqdn: str | None
    addresses: tuple[str, ...]
    now: int | None  # the node's clock, epoch seconds


@dataclass(frozen=True)
class DaemonProcess:
    name: str
    pid: int
    ppid: int | None
    state: str | None  # one letter of /proc/<pid>/status: R S D T t Z X I
    threads: int | None
    same_namespace: bool | None  # False: another network/UTS namespace (not this node's daemon)


@dataclass(frozen=True)
class Services:
    systemctl: Mapping[str, str]  # daemon -> "active", "inactive", "failed", "unavailable", ...
    processes: tuple[DaemonProcess, ...]


_SYSTEMCTL_LINE = re.compile(r"systemctl (?P<daemon>[a-z]{1,20}) (?P<state>[a-z-]{1,20})")
_PROCESS_LINE = re.compile(r"process (?P<daemon>[a-z]{1,20}) (?P<facts>(?:[a-z_]{1,10}=\S*\s*){1,8})")


def parse_identity(text: str) -> NodeIdentity:
    values: dict[str, str] = {}
    addresses: list[str] = []
    for key, value in key_values(text):
        if key == "address":
            if value and value not in addresses:
                addresses.append(value)
        else:
            values[key] = value
    return NodeIdentity(
        hostname=values.get("hostname") or None,
        fqdn=values.get("fqdn") or None,
        addresses=tuple(addresses),
        now=integer(values.get("now"), "now"),
    )


def parse_services(text: str) -> Services:
    systemctl: dict[str, str] = {}
    processes: list[DaemonProcess] = []
    for line in nonempty_lines(text):
        if (match := _SYSTEMCTL_LINE.fullmatch(line)) is not None:
            systemctl[match["daemon"]] = match["state"]
        elif (match := _PROCESS_LINE.fullmatch(line)) is not None:
            facts: dict[str, str] = {}
            for fact in match["facts"].split():
                key, _, value = fact.partition("=")
                facts[key] = value
            pid = integer(facts.get("pid"), "pid")
            if pid is None:
                continue
            state = facts.get("state") or None
            processes.append(
                DaemonProcess(
                    name=match["daemon"],
                    pid=pid,
                    ppid=integer(facts.get("ppid"), "ppid"),
                    state=state[:1] if state else None,
                    threads=integer(facts.get("threads"), "threads"),
                    same_namespace=yes_no(facts.get("same_ns")),
                )
            )
        # Other lines (a process that exited while being looked at) carry nothing.
    return Services(systemctl=systemctl, processes=tuple(processes))
