"""slurmctld's log: which role a controller took last, and why a standby refuses to take over.

The probe's ``role`` section gives ``source=``, ``now_local=`` and the log's lines that name a
role (``Running as primary controller``, ...), on Slurm 24.11 and later a standby's reason for
not taking over (``src/slurmctld/backup.c``; 22.05 logs none), and a ``fatal:`` line that ended
the daemon after its last role line (Slurm 25.11 stops a backup taking over when a state file is
missing: ``fatal: No Assoc usage file (...) to recover``, ``src/common/assoc_mgr.c``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from hyperpod_ha.slurm.text import excerpt, nonempty_lines

ROLE_EVENTS: Final = {
    "Running as primary controller": "primary",
    "slurmctld running in background mode": "standby",
    "not responding, BackupController": "taking_over",
    "Terminate signal": "stopping",
}
REFUSAL_EVENTS: Final = {
    "heartbeat file could not be read": "heartbeat_unreadable",
    "still updating the heartbeat file": "heartbeat_updating",
    "not yet able to determine if primary may actually be running": "undetermined",
    "Waiting for heartbeat file to exist": "waiting_for_heartbeat",
}
# "slurmctld version <v> started": found with str.find, once each (a ".*" pattern searched at
# every position of a long line was quadratic).
_STARTED: Final = ("slurmctld version ", " started")
# "[time] error: <message>" (file) or "<time> <host> slurmctld[pid]: error: <message>" (journal):
# the first level word after a space or at the line's start; each match is tried once.
_MESSAGE = re.compile(r"(?:^|(?<=\s))(?:error|warning|fatal): ")
# slurmctld's fatal(): "[time] fatal: <message>" (file) or "... slurmctld[pid]: fatal: <message>".
_FATAL = re.compile(r"(?:^|(?<=\s))fatal: ")
_LOG_TIME = re.compile(r"\[(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.\d+)?\]")
_JOURNAL_TIME = re.compile(r"(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:[+-]\d{4})?\s")


@dataclass(frozen=True)
class RoleLine:
    event: str  # "primary", "standby", "taking_over", "stopping" or "starting"
    timestamp: str | None  # as logged: local time, no zone
    text: str


@dataclass(frozen=True)
class RefusalLine:
    """A standby's reason for not taking over (Slurm 24.11), logged after its last role line."""

    kind: str  # "heartbeat_unreadable", "heartbeat_updating", "undetermined", "waiting_for_heartbeat"
    timestamp: str | None
    message: str  # Slurm's own words, without the time and level


@dataclass(frozen=True)
class FatalLine:
    """slurmctld's last words: a fatal error logged after its last role line (it exited then)."""

    timestamp: str | None
    message: str  # Slurm's own words, without the time and level


@dataclass(frozen=True)
class RoleLog:
    source: str | None  # "file:<path>", "journal:slurmctld" or "none"
    now_local: str | None  # the node's local time when the probe looked
    lines: tuple[RoleLine, ...]
    refusals: tuple[RefusalLine, ...] = ()  # logged after the last role line, oldest first
    fatal: FatalLine | None = None  # the newest fatal error logged after the last role line

    @property
    def last_refusal(self) -> RefusalLine | None:
        return self.refusals[-1] if self.refusals else None

    def age_of(self, timestamp: str | None) -> int | None:
        """How long before the probe a line with this timestamp was logged."""
        if timestamp is None or self.now_local is None:
            return None
        try:
            return int(
                (datetime.fromisoformat(self.now_local) - datetime.fromisoformat(timestamp)).total_seconds()
            )
        except ValueError:
            return None

    @property
    def last(self) -> RoleLine | None:
        return self.lines[-1] if self.lines else None

    def age_seconds(self, line: RoleLine | RefusalLine | FatalLine) -> int | None:
        """How long before the probe the line was logged (both times are the node's local time)."""
        return self.age_of(line.timestamp)


def classify_role_line(line: str) -> str | None:
    for needle, event in ROLE_EVENTS.items():
        if needle in line:
            return event
    head, tail = _STARTED
    start = line.find(head)
    return "starting" if start >= 0 and line.find(tail, start + len(head)) >= 0 else None


def classify_refusal_line(line: str) -> str | None:
    return next((kind for needle, kind in REFUSAL_EVENTS.items() if needle in line), None)


def parse_role_log(text: str) -> RoleLog:
    source: str | None = None
    now_local: str | None = None
    found: list[RoleLine] = []
    refusals: list[RefusalLine] = []
    fatal: FatalLine | None = None
    for line in nonempty_lines(text):
        if line.startswith("source="):
            source = line[7:] or None
        elif line.startswith("now_local="):
            now_local = line[10:] or None
        elif (event := classify_role_line(line)) is not None:
            found.append(RoleLine(event=event, timestamp=_timestamp(line), text=excerpt(line)))
            refusals = []  # a new role ends what the standby said before it
            fatal = None  # and a start after a fatal error is a new daemon
        elif (died := _FATAL.search(line)) is not None:
            fatal = FatalLine(timestamp=_timestamp(line), message=excerpt(line[died.end() :]))
        elif (kind := classify_refusal_line(line)) is not None:
            match = _MESSAGE.search(line)
            message = line[match.end() :] if match else line
            refusals.append(RefusalLine(kind=kind, timestamp=_timestamp(line), message=excerpt(message)))
        # Anything else (a read error of tac or journalctl) says nothing about the role.
    return RoleLog(
        source=source, now_local=now_local, lines=tuple(found), refusals=tuple(refusals), fatal=fatal
    )


def _timestamp(line: str) -> str | None:
    match = _LOG_TIME.match(line) or _JOURNAL_TIME.match(line)
    return match["ts"] if match else None
