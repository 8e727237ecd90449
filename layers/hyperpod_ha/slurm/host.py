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
# A process line is split into words, not matched whole: "process", the daemon, then 1-8
# "key=value" facts (a repeated group of "\S*\s*" backtracked exponentially on odd lines).
_DAEMON = re.compile(r"[a-z]{1,20}")
_FACT_KEY = re.compile(r"[a-z_]{1,10}")
_MAX_FACTS = 8


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
        elif (found := _process_facts(line)) is not None:
            daemon, facts = found
            pid = integer(facts.get("pid"), "pid")
            if pid is None:
                continue
            state = facts.get("state") or None
            processes.append(
                DaemonProcess(
                    name=daemon,
                    pid=pid,
                    ppid=integer(facts.get("ppid"), "ppid"),
                    state=state[:1] if state else None,
                    threads=integer(facts.get("threads"), "threads"),
                    same_namespace=yes_no(facts.get("same_ns")),
                )
            )
        # Other lines (a process that exited while being looked at) carry nothing.
    return Services(systemctl=systemctl, processes=tuple(processes))


def _process_facts(line: str) -> tuple[str, dict[str, str]] | None:
    """``process <daemon> key=value ...``: the daemon and its facts, or None for another line."""
    words = line.split(None, _MAX_FACTS + 2)
    if len(words) < 3 or len(words) > _MAX_FACTS + 2 or words[0] != "process":
        return None
    if not line.startswith(f"process {words[1]} ") or not _DAEMON.fullmatch(words[1]):
        return None
    facts: dict[str, str] = {}
    for fact in words[2:]:
        key, sep, value = fact.partition("=")
        if not sep or not _FACT_KEY.fullmatch(key):
            return None
        facts[key] = value
    return words[1], facts
