"""Slurm accounting (slurmdbd) as the controllers see it: ``sacctmgr`` and ``sdiag``'s queue.

* ``sacctmgr -n -P show cluster format=cluster,controlhost,controlport``: ``lab|10.1.2.3|6817``.
* ``sacctmgr -n ping`` (newer Slurm only): ``slurmdbd(primary) at <host> is UP|DOWN``; 22.05
  answers ``invalid keyword: ping``.
* ``sdiag``: ``DBD Agent queue size: <n>``, the records waiting for slurmdbd.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hyperpod_ha.slurm.errors import SlurmOutputError
from hyperpod_ha.slurm.text import excerpt, nonempty_lines, split_lines


@dataclass(frozen=True)
class ClusterRegistration:
    """A ``sacctmgr show cluster`` row: the controller registered with slurmdbd for a cluster."""

    cluster: str
    control_host: str | None  # None (and port 0) when no controller is registered
    control_port: int | None


@dataclass(frozen=True)
class DbdPing:
    supported: bool
    responding: tuple[tuple[str, bool], ...]  # (host, UP) per slurmdbd, newer Slurm only


_DBD_PING = re.compile(r"slurmdbd\((?P<label>[a-z0-9]+)\) at (?P<host>\S+) is (?P<state>UP|DOWN)")
_AGENT_QUEUE = re.compile(r"DBD Agent queue size:\s*(?P<n>[0-9]{1,9})")


def parse_cluster_registrations(text: str) -> list[ClusterRegistration]:
    """``sacctmgr -n -P show cluster format=cluster,controlhost,controlport``."""
    rows: list[ClusterRegistration] = []
    for line in nonempty_lines(text):
        fields = line.removesuffix("|").split("|")
        if len(fields) != 3 or not fields[0] or not (fields[2] == "" or fields[2].isdigit()):
            raise SlurmOutputError(f"not a cluster|controlhost|controlport row: {excerpt(line, 80)!r}")
        port = int(fields[2]) if fields[2] else None
        rows.append(
            ClusterRegistration(
                cluster=fields[0],
                control_host=fields[1] or None,
                control_port=port or None,
            )
        )
    return rows


def parse_dbd_ping(text: str) -> DbdPing:
    """``sacctmgr -n ping``: feature detection first (22.05: ``invalid keyword: ping``)."""
    lines = nonempty_lines(text)
    if any(line.startswith("invalid keyword: ping") for line in lines):
        return DbdPing(supported=False, responding=())
    found: list[tuple[str, bool]] = []
    for line in lines:
        match = _DBD_PING.fullmatch(line)
        if match is not None:
            found.append((match["host"], match["state"] == "UP"))
    if not found:
        raise SlurmOutputError("no 'slurmdbd(<label>) at <host> is UP|DOWN' line")
    return DbdPing(supported=True, responding=tuple(found))


def parse_agent_queue_size(text: str) -> int | None:
    """``sdiag``'s ``DBD Agent queue size`` (grows while slurmdbd is away)."""
    for line in split_lines(text):
        match = _AGENT_QUEUE.fullmatch(line)
        if match is not None:
            return int(match["n"])
    return None
