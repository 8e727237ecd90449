"""How loaded the active slurmctld is, as ``sdiag`` tells it, and how many accounting records it
may queue for slurmdbd (``MaxDBDMsgs``).

The probe runs ``sdiag -t`` (RPC rows sorted by total time) and keeps only the lines read here
(``controller_probe.sh``'s ``SDIAG_FILTER``): the header's figures, the main and backfill
schedulers' cycle lines and the first rows of the two RPC tables. The text form is the same from
Slurm 22.05 to 25.11 (``src/sdiag/sdiag.c``); ``sdiag --json`` needs the serializer plugins, which
a cluster may not have. Times are microseconds, as sdiag prints them.

``MaxDBDMsgs``: ``scontrol show config`` prints the value slurmctld runs with; 0 (or absent) means
Slurm's default, the larger of 10,000 and 2 x MaxJobCount + 4 x nodes (``slurmdbd_agent.c``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from hyperpod_ha.slurm.text import split_lines

# Slurm's floor and default of MaxDBDMsgs (DEFAULT_MAX_DBD_MSGS).
DBD_MSGS_FLOOR: Final = 10_000
# Rows kept of each RPC table (the probe prints at most 24 of each).
MAX_RPC_ROWS: Final = 24
_NAME_LIMIT: Final = 64

_HEADER = re.compile(
    r"(?P<key>Server thread count|Agent queue size|Agent count|Agent thread count|DBD Agent queue size"
    r"|Jobs pending|Jobs running):\s*(?P<n>-?[0-9]{1,10})"
)
_STAMP = re.compile(r"(?P<key>sdiag output at|Data since)\s.*\((?P<n>[0-9]{1,12})\)")
_CYCLE = re.compile(r"(?P<key>Last cycle|Mean cycle|Max cycle|Total cycles):\s*(?P<n>[0-9]{1,20})")
# "REQUEST_JOB_INFO  ( 2003) count:12 ave_time:340 total_time:4080 [queued:.. ...]" and
# "alice  (    1000) count:.. ave_time:.. total_time:..".
_RPC = re.compile(
    r"(?P<name>[^\s(]{1,128})\s*\(\s*(?P<id>[0-9]{1,10})\)\s+count:(?P<count>[0-9]{1,10})\s+"
    r"ave_time:(?P<ave>[0-9]{1,20})\s+total_time:(?P<total>[0-9]{1,20})(?:\s.*)?"
)
_SECTIONS: Final = (
    ("Main schedule statistics", "main"),
    ("Backfilling stats", "backfill"),
    ("Remote Procedure Call statistics by message type", "types"),
    ("Remote Procedure Call statistics by user", "users"),
    ("Pending RPC statistics", "other"),
    ("Main scheduler exit", "other"),
    ("Backfill exit", "other"),
)
_HEADER_FIELDS: Final = {
    "Server thread count": "server_threads",
    "Agent queue size": "agent_queue",
    "Agent count": "agent_count",
    "Agent thread count": "agent_threads",
    "DBD Agent queue size": "dbd_agent_queue",
    "Jobs pending": "jobs_pending",
    "Jobs running": "jobs_running",
}


@dataclass(frozen=True)
class RpcRow:
    """One row of sdiag's RPC statistics: a message type or a user, counted since ``since``."""

    name: str
    count: int
    total_us: int

    @property
    def average_us(self) -> int:
        return self.total_us // self.count if self.count else 0


@dataclass(frozen=True)
class ControllerLoad:
    """``sdiag`` of the active slurmctld; a figure it did not print is ``None``."""

    sampled_at: int | None = None  # "sdiag output at" (epoch seconds, slurmctld's clock)
    since: int | None = None  # "Data since": when the counters were last reset
    server_threads: int | None = None
    agent_queue: int | None = None
    agent_count: int | None = None
    agent_threads: int | None = None
    dbd_agent_queue: int | None = None
    jobs_pending: int | None = None
    jobs_running: int | None = None
    main_cycle_last_us: int | None = None
    main_cycle_mean_us: int | None = None
    main_cycle_max_us: int | None = None
    backfill_cycle_last_us: int | None = None
    backfill_cycle_mean_us: int | None = None
    backfill_cycle_max_us: int | None = None
    rpc_types: tuple[RpcRow, ...] = ()  # by total time, highest first
    rpc_users: tuple[RpcRow, ...] = ()

    @property
    def empty(self) -> bool:
        return self.server_threads is None and self.dbd_agent_queue is None and not self.rpc_types


def parse_sdiag(text: str) -> ControllerLoad:
    """sdiag's text (whole or as the probe filters it); lines out of its form are skipped."""
    values: dict[str, int] = {}
    rows: dict[str, list[RpcRow]] = {"types": [], "users": []}
    section = "header"
    for line in split_lines(text):
        opened = next((name for title, name in _SECTIONS if line.startswith(title)), None)
        if opened is not None:
            section = opened
            continue
        if section in rows:
            match = _RPC.fullmatch(line)
            if match is not None and len(rows[section]) < MAX_RPC_ROWS:
                name = match["name"][:_NAME_LIMIT]
                rows[section].append(RpcRow(name, int(match["count"]), int(match["total"])))
        elif section in ("main", "backfill"):
            if (match := _CYCLE.fullmatch(line)) is not None:
                key = match["key"].split()[0].lower()  # last, mean, max, total
                values.setdefault(f"{section}_cycle_{key}_us", int(match["n"]))
        elif (match := _HEADER.fullmatch(line)) is not None:
            values.setdefault(_HEADER_FIELDS[match["key"]], int(match["n"]))
        elif (match := _STAMP.fullmatch(line)) is not None:
            values.setdefault("sampled_at" if match["key"] == "sdiag output at" else "since", int(match["n"]))
    values.pop("main_cycle_total_us", None)
    values.pop("backfill_cycle_total_us", None)
    return ControllerLoad(
        **{key: value for key, value in values.items() if value >= 0},
        rpc_types=tuple(rows["types"]),
        rpc_users=tuple(rows["users"]),
    )


_CONFIG_LINE = re.compile(r"(?P<key>MaxDBDMsgs|MaxJobCount)\s*=\s*(?P<n>[0-9]{1,10})")


def dbd_message_limit(config_text: str, nodes: int | None) -> int | None:
    """The running ``MaxDBDMsgs`` from ``scontrol show config``'s lines; Slurm's default when it
    is 0 or unset (which needs MaxJobCount and the node count); ``None`` when unknown."""
    found: dict[str, int] = {}
    for line in split_lines(config_text):
        if (match := _CONFIG_LINE.fullmatch(line)) is not None:
            found.setdefault(match["key"], int(match["n"]))
    if found.get("MaxDBDMsgs"):
        return max(found["MaxDBDMsgs"], DBD_MSGS_FLOOR)
    if "MaxJobCount" not in found or nodes is None:
        return None
    return max(DBD_MSGS_FLOOR, 2 * found["MaxJobCount"] + 4 * nodes)
