"""slurmctld's log: which role a controller took last, and why a standby refuses to take over.

The probe's ``role`` section gives ``source=``, ``now_local=`` and the log's lines that name a
role (``Running as primary controller``, ...), on Slurm 24.11 and later a standby's reason for
not taking over (``src/slurmctld/backup.c``; 22.05 logs none), and a ``fatal:`` line that ended
the daemon after its last role line (Slurm 25.11 stops a backup taking over when a state file is
missing: ``fatal: No Assoc usage file (...) to recover``, ``src/common/assoc_mgr.c``).

A line counts only when it is slurmctld's own line (the log file's ``[<time>] <message>``, the
journal's ``<time> <host> slurmctld[<pid>]: <message>``) and its whole message is one of these
(``src/common/log.c`` writes the level word, then the message). slurmctld logs users' text inside
its messages (``_get_job_parts: invalid partition specified: <text>`` at the default level), never
at a message's start: text anywhere else in a line says nothing. A carriage return is text, not a
line break (slurmctld's lines end at ``\\n``); a line holding one is no role line. The probe's awk
(``controller_probe.sh``, ``last_role_lines``) reads the same grammar.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from hyperpod_ha.slurm.text import excerpt

# slurmctld's own messages, matched whole; the level word is the one Slurm gives each.
ROLE_EVENTS: Final = {
    "primary": re.compile(r"Running as primary controller"),
    "standby": re.compile(r"slurmctld running in background mode"),
    "taking_over": re.compile(
        r"error: ControlMachine [^ ]{1,255} not responding, "
        r"BackupController[0-9]{1,3} [^ ]{1,255} taking over"
    ),
    # 22.05: "(SIGINT or SIGTERM)"; 24.11 and later name the signal.
    "stopping": re.compile(r"Terminate signal (?:SIGINT|SIGTERM|SIGQUIT|\(SIGINT or SIGTERM\)) received"),
    # 22.05: "... started on cluster lab"; 24.11 and later add the cluster id: "lab(3851)".
    "starting": re.compile(r"slurmctld version [0-9][0-9A-Za-z._-]{0,40} started on cluster [^ ]{1,255}"),
}
_NOT_TAKING_CONTROL: Final = "Not taking control. Primary slurmctld is unresponsive, but "
REFUSAL_EVENTS: Final = {
    "heartbeat_unreadable": "error: "
    + _NOT_TAKING_CONTROL
    + "heartbeat file could not be read. Something is wrong with your StateSaveLocation.",
    "heartbeat_updating": "error: "
    + _NOT_TAKING_CONTROL
    + "is still updating the heartbeat file. Check for clock skew.",
    "undetermined": "error: "
    + _NOT_TAKING_CONTROL
    + "not yet able to determine if primary may actually be running.",
    "waiting_for_heartbeat": "warning: Waiting for heartbeat file to exist...",
}
_REFUSAL_KINDS: Final = {message: kind for kind, message in REFUSAL_EVENTS.items()}
_FATAL: Final = "fatal: "
# "[<time>] ": LogTimeFormat's forms (ISO 8601 with or without milliseconds, RFC 5424/3339,
# "short"), none holding "]".
_FILE_HEADER = re.compile(r"\[(?P<time>[^\]\r\n]{1,64})\] ")
# journalctl -o short-iso: "<time> <host> slurmctld[<pid>]: "; a slurmctld run with -D under
# systemd writes its stderr form into the journal: "[<time>] <message>" (24.11 and later) or
# "slurmctld: <message>" (before).
_JOURNAL_HEADER = re.compile(
    r"(?P<time>[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[^ \r\n]{0,16}) [^ \r\n]{1,255} "
    r"slurmctld\[[0-9]{1,10}\]: (?:\[[^\]\r\n]{1,64}\] |slurmctld: )?"
)
_ISO_SECONDS = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}")


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
class LogLine:
    """One of slurmctld's own log lines: when it was logged and its message (level word included)."""

    timestamp: str | None  # local time to the second, when the line's time is ISO 8601
    message: str


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


def log_line(line: str) -> LogLine | None:
    """The line as slurmctld's own (file or journal form), or None for any other line."""
    if "\r" in line or "\n" in line:
        return None  # slurmctld ends its lines at "\n" and writes no "\r": this is someone's text
    header = _FILE_HEADER.match(line) or _JOURNAL_HEADER.match(line)
    if header is None:
        return None
    time = _ISO_SECONDS.match(header["time"])
    return LogLine(timestamp=time[0] if time else None, message=line[header.end() :])


def classify_role_line(line: str) -> str | None:
    """The role a line says slurmctld took, when the line's whole message says one."""
    own = log_line(line)
    return _role_event(own.message) if own is not None else None


def classify_refusal_line(line: str) -> str | None:
    """A standby's reason for not taking over, when the line's whole message is one."""
    own = log_line(line)
    return _REFUSAL_KINDS.get(own.message) if own is not None else None


def _role_event(message: str) -> str | None:
    return next((event for event, pattern in ROLE_EVENTS.items() if pattern.fullmatch(message)), None)


def parse_role_log(text: str) -> RoleLog:
    source: str | None = None
    now_local: str | None = None
    found: list[RoleLine] = []
    refusals: list[RefusalLine] = []
    fatal: FatalLine | None = None
    # Lines end at "\n" ("\r\n" through Session Manager's pty): a lone "\r" is text.
    for raw in text.replace("\r\n", "\n").split("\n"):
        line = raw.strip(" \t")
        if line.startswith("source="):
            source = line[7:] or None
        elif line.startswith("now_local="):
            now_local = line[10:] or None
        elif (own := log_line(line)) is None:
            continue  # not slurmctld's own line (a read error of tac or journalctl, someone's text)
        elif (event := _role_event(own.message)) is not None:
            found.append(RoleLine(event=event, timestamp=own.timestamp, text=excerpt(line)))
            refusals = []  # a new role ends what the standby said before it
            fatal = None  # and a start after a fatal error is a new daemon
        elif own.message.startswith(_FATAL):
            fatal = FatalLine(timestamp=own.timestamp, message=excerpt(own.message[len(_FATAL) :]))
        elif (kind := _REFUSAL_KINDS.get(own.message)) is not None:
            message = own.message.partition(": ")[2]
            refusals.append(RefusalLine(kind=kind, timestamp=own.timestamp, message=excerpt(message)))
    return RoleLog(
        source=source, now_local=now_local, lines=tuple(found), refusals=tuple(refusals), fatal=fatal
    )
