"""Parsers for what Slurm's commands print, and for the controller probe's output.

One parser per probe section (see ``hyperpod_ha/probe/controller_probe.sh``). Every parser
takes text from outside and either returns typed values or raises :class:`SlurmOutputError`
(a ``ValueError``) with a reason that is safe to log; none crashes on arbitrary text.

Formats seen on Slurm 22.05.8 (``/work/shared/captures``) and in newer Slurm's source:

* ``scontrol ping``: one ``Slurmctld(<label>) at <host> is UP|DOWN`` line per configured
  controller in configuration order; the label is ``primary`` for the first, ``backup`` for the
  second of two, ``backup<i>`` (the 0-based position) with three or more. When one is down and
  the caller is root, a three-line banner follows. The label is the configured position, not
  who is active: a standby backup answers UP too.
* ``scontrol show config``: ``Key = value`` lines, ``SlurmctldHost[i] = name(address)``.
* ``sacctmgr -n -P show cluster format=cluster,controlhost,controlport``: ``lab|10.1.2.3|6817``.
* ``sacctmgr -n ping`` (newer Slurm only): ``slurmdbd(primary) at <host> is UP|DOWN``; 22.05
  answers ``invalid keyword: ping``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Final

TEXT_LIMIT: Final = 240
PROBE_RESULT_PREFIX: Final = "HYPERPOD_HA_PROBE_RESULT "
PROBE_MARK: Final = "@@hyperpod-ha"
# Sections the probe prints, in its order.
SECTIONS: Final = (
    "identity",
    "services",
    "slurm_conf",
    "config",
    "ping",
    "sinfo",
    "sdiag",
    "dbd_clusters",
    "dbd_ping",
    "role",
    "heartbeat",
    "state_save",
)
# Exit codes of ``timeout`` (124; 137 when it had to kill) and of the probe's own kill.
TIMED_OUT_CODES: Final = frozenset({124, 137})
NOT_FOUND_CODE: Final = 127


class SlurmOutputError(ValueError):
    """Text is not what the parser expects. The reason is safe to log."""


def excerpt(text: str, limit: int = TEXT_LIMIT, *, tail: bool = False) -> str:
    """One line of outside text, trimmed to a bounded size for reasons and reports.

    ``tail`` keeps the end instead of the start: Slurm puts an error's cause last.
    """
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return "..." + flat[3 - limit :] if tail else flat[: limit - 3] + "..."


def _lines(text: str) -> list[str]:
    # Session Manager's pty turns \n into \r\n; strip both ends of every line.
    return [line.strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]


# --- scontrol ping ------------------------------------------------------------------------


@dataclass(frozen=True)
class PingLine:
    """One controller's line of ``scontrol ping``: its configured position and whether it answered."""

    host: str
    label: str
    responding: bool

    @property
    def index(self) -> int:
        """Position among the SlurmctldHost lines (0 = the configured primary)."""
        return label_index(self.label)


_PING = re.compile(
    r"Slurmctld\((?P<label>primary|backup(?:[1-9][0-9]{0,2})?)\) at (?P<host>\S+) is (?P<state>UP|DOWN)"
)
_BANNER = re.compile(r"\*{10,}|\*\* RESTORE SLURMCTLD DAEMON TO SERVICE(?: \*\*)?")


def label_index(label: str) -> int:
    """``primary`` -> 0, ``backup`` -> 1 (two controllers), ``backup<i>`` -> i."""
    if label == "primary":
        return 0
    if label == "backup":
        return 1
    if label.startswith("backup") and label[6:].isdigit():
        return int(label[6:])
    raise SlurmOutputError(f"unknown controller label {excerpt(label, 40)!r}")


def parse_ping(text: str) -> list[PingLine]:
    """Parse ``scontrol ping`` output; raise :class:`SlurmOutputError` on anything else."""
    found: list[PingLine] = []
    for line in _lines(text):
        if not line or _BANNER.fullmatch(line):
            continue
        match = _PING.fullmatch(line)
        if match is None:
            raise SlurmOutputError(f"not scontrol ping output: {excerpt(line, 80)!r}")
        found.append(PingLine(host=match["host"], label=match["label"], responding=match["state"] == "UP"))
    if not found:
        raise SlurmOutputError("no 'Slurmctld(<label>) at <host> is UP|DOWN' line")
    # Slurm prints every configured controller in order, so each label names its own position.
    for position, ping in enumerate(found):
        expected = "backup" if position == 1 and len(found) == 2 else ("primary" if position == 0 else None)
        if ping.label != (expected or f"backup{position}"):
            raise SlurmOutputError(f"controller label {ping.label!r} out of place at position {position}")
    return found


# --- configuration: scontrol show config and slurm.conf ------------------------------------


@dataclass(frozen=True)
class ControllerHost:
    """One SlurmctldHost line: position (0 = primary), host name and optional address."""

    index: int
    name: str
    address: str | None


@dataclass(frozen=True)
class SlurmConfig:
    source: str  # "scontrol" or "slurm.conf"
    controllers: tuple[ControllerHost, ...]
    slurmctld_timeout: int | None
    state_save_location: str | None
    log_file: str | None
    cluster_name: str | None
    slurm_user: str | None
    version: str | None


_SHOW_CONFIG_LINE = re.compile(
    r"(?P<key>[A-Za-z_][A-Za-z0-9_]*(?:\[(?P<i>[0-9]{1,3})\])?)\s*=\s*(?P<value>.*)"
)
_HOST_VALUE = re.compile(r"(?P<name>[^\s()]+)(?:\((?P<address>[^\s()]+)\))?")
_SECONDS = re.compile(r"(?P<n>[0-9]{1,9})(?:\s*sec)?")


def _value(raw: str) -> str | None:
    value = raw.strip()
    return None if value in ("", "(null)") else value


def _controller_hosts(indexed: Iterable[tuple[int, str]]) -> tuple[ControllerHost, ...]:
    hosts: list[ControllerHost] = []
    for position, (_, raw) in enumerate(sorted(indexed)):
        # slurm.conf allows "SlurmctldHost=name(address)" and "name" alone.
        match = _HOST_VALUE.fullmatch(raw.strip())
        if match is None:
            raise SlurmOutputError(f"SlurmctldHost value is not name(address): {excerpt(raw, 80)!r}")
        hosts.append(ControllerHost(index=position, name=match["name"], address=match["address"]))
    return tuple(hosts)


def _seconds(raw: str | None) -> int | None:
    if raw is None:
        return None
    match = _SECONDS.fullmatch(raw.strip())
    if match is None:
        raise SlurmOutputError(f"not a number of seconds: {excerpt(raw, 40)!r}")
    return int(match["n"])


def _config_from_pairs(source: str, pairs: list[tuple[str, int | None, str]]) -> SlurmConfig:
    single: dict[str, str | None] = {}
    hosts: list[tuple[int, str]] = []
    legacy: dict[str, str] = {}
    for key, position, raw in pairs:
        lower = key.lower()
        if lower == "slurmctldhost":
            hosts.append((position if position is not None else len(hosts), raw))
        elif lower in ("controlmachine", "controladdr", "backupcontroller", "backupaddr"):
            if (value := _value(raw)) is not None:
                legacy[lower] = value
        else:
            single[lower] = _value(raw)
    if not hosts and "controlmachine" in legacy:
        # Before SlurmctldHost (Slurm < 18.08): ControlMachine/ControlAddr + BackupController/BackupAddr.
        hosts.append((0, _legacy_host(legacy["controlmachine"], legacy.get("controladdr"))))
        if "backupcontroller" in legacy:
            hosts.append((1, _legacy_host(legacy["backupcontroller"], legacy.get("backupaddr"))))
    user = single.get("slurmuser")
    return SlurmConfig(
        source=source,
        controllers=_controller_hosts(hosts),
        slurmctld_timeout=_seconds(single.get("slurmctldtimeout")),
        state_save_location=single.get("statesavelocation"),
        log_file=single.get("slurmctldlogfile"),
        cluster_name=single.get("clustername"),
        slurm_user=user.split("(", 1)[0] if user else None,
        version=single.get("slurm_version"),
    )


def _legacy_host(name: str, address: str | None) -> str:
    return f"{name}({address})" if address else name


def parse_show_config(text: str) -> SlurmConfig:
    """``scontrol show config`` (the probe keeps only the lines it needs)."""
    pairs: list[tuple[str, int | None, str]] = []
    for line in _lines(text):
        match = _SHOW_CONFIG_LINE.fullmatch(line)
        if match is None:
            continue  # the header ("Configuration data as of ...") and ping lines at the end
        key = match["key"].split("[", 1)[0]
        pairs.append((key, int(match["i"]) if match["i"] is not None else None, match["value"]))
    if not pairs:
        raise SlurmOutputError("no 'Key = value' line: not scontrol show config output")
    return _config_from_pairs("scontrol", pairs)


_CONF_LINE = re.compile(r"(?P<key>[A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?P<value>[^#]*?)\s*(?:#.*)?")


def parse_slurm_conf(text: str) -> SlurmConfig:
    """The probe's ``slurm_conf`` section: ``path=<file>`` then the file's relevant lines."""
    lines = _lines(text)
    if not lines or not lines[0].startswith("path="):
        raise SlurmOutputError("slurm_conf section does not start with path=")
    if not lines[0][5:]:
        raise SlurmOutputError("no readable slurm.conf found")
    pairs: list[tuple[str, int | None, str]] = []
    for line in lines[1:]:
        if not line or line.startswith("#"):
            continue
        match = _CONF_LINE.fullmatch(line)
        if match is None:
            raise SlurmOutputError(f"not a slurm.conf line: {excerpt(line, 80)!r}")
        pairs.append((match["key"], None, match["value"]))
    return _config_from_pairs("slurm.conf", pairs)


# --- slurmdbd: sacctmgr ------------------------------------------------------------------


@dataclass(frozen=True)
class ClusterRegistration:
    """A ``sacctmgr show cluster`` row: the controller registered with slurmdbd for a cluster."""

    cluster: str
    control_host: str | None  # None (and port 0) when no controller is registered
    control_port: int | None


def parse_cluster_registrations(text: str) -> list[ClusterRegistration]:
    """``sacctmgr -n -P show cluster format=cluster,controlhost,controlport``."""
    rows: list[ClusterRegistration] = []
    for line in _lines(text):
        if not line:
            continue
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


@dataclass(frozen=True)
class DbdPing:
    supported: bool
    responding: tuple[tuple[str, bool], ...]  # (host, UP) per slurmdbd, newer Slurm only


_DBD_PING = re.compile(r"slurmdbd\((?P<label>[a-z0-9]+)\) at (?P<host>\S+) is (?P<state>UP|DOWN)")


def parse_dbd_ping(text: str) -> DbdPing:
    """``sacctmgr -n ping``: feature detection first (22.05: ``invalid keyword: ping``)."""
    lines = [line for line in _lines(text) if line]
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


ERROR_LIMIT: Final = 160


def first_error(text: str) -> str | None:
    """The most telling line of a failed command's output (its first error), its end kept.

    At most :data:`ERROR_LIMIT` characters, so that a prefix saying which check failed fits
    in :data:`TEXT_LIMIT`.
    """
    lines = [line for line in _lines(text) if line]
    for line in lines:
        if "error" in line.lower() or "fatal" in line.lower() or "unable" in line.lower():
            return excerpt(line, ERROR_LIMIT, tail=True)
    return excerpt(lines[0], ERROR_LIMIT, tail=True) if lines else None


# --- sinfo and sdiag ---------------------------------------------------------------------


@dataclass(frozen=True)
class NodeStateCount:
    state: str  # e.g. "idle", "mixed", "down*" (a trailing * means not responding)
    count: int

    @property
    def responding(self) -> bool:
        return not self.state.endswith("*")


_SINFO_LINE = re.compile(r"(?P<state>[a-z][a-z_]*[*~#!%$@^+-]*)\s+(?P<count>[0-9]{1,7})")


def parse_node_states(text: str) -> list[NodeStateCount]:
    """``sinfo -h -o '%T %D'``: one ``<state> <count>`` line per state and partition."""
    counts: list[NodeStateCount] = []
    for line in _lines(text):
        if not line:
            continue
        match = _SINFO_LINE.fullmatch(line)
        if match is None:
            raise SlurmOutputError(f"not a '<state> <count>' line: {excerpt(line, 80)!r}")
        counts.append(NodeStateCount(state=match["state"], count=int(match["count"])))
    return counts


_AGENT_QUEUE = re.compile(r"DBD Agent queue size:\s*(?P<n>[0-9]{1,9})")


def parse_agent_queue_size(text: str) -> int | None:
    """``sdiag``'s ``DBD Agent queue size`` (grows while slurmdbd is away)."""
    for line in _lines(text):
        match = _AGENT_QUEUE.fullmatch(line)
        if match is not None:
            return int(match["n"])
    return None


# --- key=value sections ------------------------------------------------------------------


def _key_values(text: str) -> list[tuple[str, str]]:
    # Other lines (a shell warning, a message of a command) carry nothing and are skipped.
    pairs: list[tuple[str, str]] = []
    for line in _lines(text):
        key, sep, value = line.partition("=")
        if sep and re.fullmatch(r"[a-z_]{1,40}", key):
            pairs.append((key, value.strip()))
    return pairs


def _int(value: str | None, what: str) -> int | None:
    if value is None or value == "":
        return None
    if not re.fullmatch(r"-?[0-9]{1,19}", value):
        raise SlurmOutputError(f"{what} is not an integer: {excerpt(value, 40)!r}")
    return int(value)


def _yes_no(value: str | None) -> bool | None:
    return {"yes": True, "no": False}.get(value or "")


@dataclass(frozen=True)
class NodeIdentity:
    hostname: str | None
    fqdn: str | None
    addresses: tuple[str, ...]
    now: int | None  # the node's clock, epoch seconds


def parse_identity(text: str) -> NodeIdentity:
    values: dict[str, str] = {}
    addresses: list[str] = []
    for key, value in _key_values(text):
        if key == "address":
            if value and value not in addresses:
                addresses.append(value)
        else:
            values[key] = value
    return NodeIdentity(
        hostname=values.get("hostname") or None,
        fqdn=values.get("fqdn") or None,
        addresses=tuple(addresses),
        now=_int(values.get("now"), "now"),
    )


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


def parse_services(text: str) -> Services:
    systemctl: dict[str, str] = {}
    processes: list[DaemonProcess] = []
    for line in _lines(text):
        if not line:
            continue
        if (match := _SYSTEMCTL_LINE.fullmatch(line)) is not None:
            systemctl[match["daemon"]] = match["state"]
        elif (match := _PROCESS_LINE.fullmatch(line)) is not None:
            facts: dict[str, str] = {}
            for fact in match["facts"].split():
                key, _, value = fact.partition("=")
                facts[key] = value
            pid = _int(facts.get("pid"), "pid")
            if pid is None:
                continue
            state = facts.get("state") or None
            processes.append(
                DaemonProcess(
                    name=match["daemon"],
                    pid=pid,
                    ppid=_int(facts.get("ppid"), "ppid"),
                    state=state[:1] if state else None,
                    threads=_int(facts.get("threads"), "threads"),
                    same_namespace=_yes_no(facts.get("same_ns")),
                )
            )
        # Other lines (a process that exited while being looked at) carry nothing.
    return Services(systemctl=systemctl, processes=tuple(processes))


# --- slurmctld's log: which role it took -------------------------------------------------

ROLE_EVENTS: Final = {
    "Running as primary controller": "primary",
    "slurmctld running in background mode": "standby",
    "not responding, BackupController": "taking_over",
    "Terminate signal": "stopping",
}
# Slurm 24.11's standby logs why it does not take over (src/slurmctld/backup.c); 22.05 has none.
REFUSAL_EVENTS: Final = {
    "heartbeat file could not be read": "heartbeat_unreadable",
    "still updating the heartbeat file": "heartbeat_updating",
    "not yet able to determine if primary may actually be running": "undetermined",
    "Waiting for heartbeat file to exist": "waiting_for_heartbeat",
}
_STARTED = re.compile(r"slurmctld version .* started")
# "[time] error: <message>" (file) or "<time> <host> slurmctld[pid]: error: <message>" (journal)
_MESSAGE = re.compile(r"(?:^|\s)(?:error|warning): (?P<message>.*)$")
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
class RoleLog:
    source: str | None  # "file:<path>", "journal:slurmctld" or "none"
    now_local: str | None  # the node's local time when the probe looked
    lines: tuple[RoleLine, ...]
    refusals: tuple[RefusalLine, ...] = ()  # logged after the last role line, oldest first

    @property
    def last_refusal(self) -> RefusalLine | None:
        return self.refusals[-1] if self.refusals else None

    @property
    def last(self) -> RoleLine | None:
        return self.lines[-1] if self.lines else None

    def age_seconds(self, line: RoleLine | RefusalLine) -> int | None:
        """How long before the probe the line was logged (both times are the node's local time)."""
        if line.timestamp is None or self.now_local is None:
            return None
        try:
            then = datetime.fromisoformat(line.timestamp)
            now = datetime.fromisoformat(self.now_local)
        except ValueError:
            return None
        return int((now - then).total_seconds())


def classify_role_line(line: str) -> str | None:
    for needle, event in ROLE_EVENTS.items():
        if needle in line:
            return event
    return "starting" if _STARTED.search(line) else None


def classify_refusal_line(line: str) -> str | None:
    return next((kind for needle, kind in REFUSAL_EVENTS.items() if needle in line), None)


def _timestamp(line: str) -> str | None:
    match = _LOG_TIME.match(line) or _JOURNAL_TIME.match(line)
    return match["ts"] if match else None


def parse_role_log(text: str) -> RoleLog:
    source: str | None = None
    now_local: str | None = None
    found: list[RoleLine] = []
    refusals: list[RefusalLine] = []
    for line in _lines(text):
        if not line:
            continue
        if line.startswith("source="):
            source = line[7:] or None
        elif line.startswith("now_local="):
            now_local = line[10:] or None
        elif (event := classify_role_line(line)) is not None:
            found.append(RoleLine(event=event, timestamp=_timestamp(line), text=excerpt(line)))
            refusals = []  # a new role ends what the standby said before it
        elif (kind := classify_refusal_line(line)) is not None:
            match = _MESSAGE.search(line)
            message = match["message"] if match else line
            refusals.append(RefusalLine(kind=kind, timestamp=_timestamp(line), message=excerpt(message)))
        # Anything else (a read error of tac or journalctl) says nothing about the role.
    return RoleLog(source=source, now_local=now_local, lines=tuple(found), refusals=tuple(refusals))


# --- StateSaveLocation: the heartbeat and the directory ----------------------------------

HEARTBEAT_SIZE: Final = 16
# More controllers than this is no Slurm configuration; a bigger index means a foreign file.
MAX_CONTROLLER_INDEX: Final = 64


@dataclass(frozen=True)
class Heartbeat:
    """``<StateSaveLocation>/heartbeat``: written only by the active controller."""

    path: str | None
    exists: bool | None
    size: int | None
    mtime: int | None
    now: int | None  # the node's clock when it read the file
    beat_time: int | None  # bytes 0-7, big-endian
    writer_index: int | None  # bytes 8-15, big-endian: position of the writing controller
    error: str | None

    @property
    def age_seconds(self) -> int | None:
        beat = self.beat_time if self.beat_time else self.mtime
        if beat is None or self.now is None:
            return None
        return max(0, self.now - beat)


def decode_heartbeat(data: bytes) -> tuple[int, int]:
    """(time of the last beat, index of the controller that wrote it)."""
    if len(data) != HEARTBEAT_SIZE:
        raise SlurmOutputError(f"heartbeat is {len(data)} bytes, expected {HEARTBEAT_SIZE}")
    beat = int.from_bytes(data[:8], "big")
    writer = int.from_bytes(data[8:], "big")
    if writer > MAX_CONTROLLER_INDEX:
        raise SlurmOutputError(f"heartbeat writer index {writer} is not a controller position")
    return beat, writer


def parse_heartbeat(text: str) -> Heartbeat:
    values = dict(_key_values(text))
    beat: int | None = None
    writer: int | None = None
    error = values.get("error") or None
    raw = values.get("bytes")
    if raw is not None and error is None:
        numbers = raw.split()
        if not all(n.isdigit() and int(n) < 256 for n in numbers):
            raise SlurmOutputError("heartbeat bytes are not decimal bytes")
        try:
            beat, writer = decode_heartbeat(bytes(int(n) for n in numbers))
        except SlurmOutputError as problem:
            error = str(problem)
    return Heartbeat(
        path=values.get("path") or None,
        exists=_yes_no(values.get("exists")),
        size=_int(values.get("size"), "size"),
        mtime=_int(values.get("mtime"), "mtime"),
        now=_int(values.get("now"), "now"),
        beat_time=beat,
        writer_index=writer,
        error=excerpt(error) if error else None,
    )


@dataclass(frozen=True)
class StateSave:
    path: str | None
    exists: bool | None
    owner: str | None
    mount_target: str | None
    fstype: str | None
    source: str | None
    writable: bool | None  # as root
    write_error: str | None  # why not ("Read-only file system", ...)
    slurm_user: str | None
    writable_by_slurm_user: bool | None
    slurm_user_write_error: str | None
    error: str | None


def parse_state_save(text: str) -> StateSave:
    values = dict(_key_values(text))
    return StateSave(
        path=values.get("path") or None,
        exists=_yes_no(values.get("exists")),
        owner=values.get("owner") or None,
        mount_target=values.get("mount_target") or None,
        fstype=values.get("fstype") or None,
        source=values.get("source") or None,
        writable=_yes_no(values.get("writable")),
        write_error=excerpt(values["write_error"]) if values.get("write_error") else None,
        slurm_user=values.get("slurm_user") or None,
        writable_by_slurm_user=_yes_no(values.get("writable_by_slurm_user")),
        slurm_user_write_error=(
            excerpt(values["slurm_user_write_error"]) if values.get("slurm_user_write_error") else None
        ),
        error=excerpt(values["error"]) if values.get("error") else None,
    )


# --- the probe's whole output ------------------------------------------------------------


@dataclass(frozen=True)
class ProbeSection:
    name: str
    text: str
    exit_code: int
    millis: int
    timed_out: bool  # killed by the probe at its deadline (exit_code is then 124)
    truncated: bool

    @property
    def ran_out_of_time(self) -> bool:
        return self.timed_out or self.exit_code in TIMED_OUT_CODES


@dataclass(frozen=True)
class ProbeOutput:
    version: int
    nonce: str
    sections: Mapping[str, ProbeSection]
    complete: bool  # the final result line was there: the probe ran to its end
    elapsed_ms: int | None
    error: str | None = None  # what stopped the probe, when it says so in its result line


class ProbeOutputError(SlurmOutputError):
    """The text is not (or not enough of) the controller probe's output."""


_BEGIN = re.compile(
    r"@@hyperpod-ha probe begin version=(?P<version>[0-9]{1,4}) nonce=(?P<nonce>[A-Za-z0-9]{4,40})"
)
_END_FIELDS = re.compile(
    r"rc=(?P<rc>-?[0-9]{1,4}) ms=(?P<ms>[0-9]{1,9}) timed_out=(?P<to>[01]) truncated=(?P<tr>[01])"
)


def parse_probe_output(text: str) -> ProbeOutput:
    """Split the probe's output into its sections (markers carry the run's nonce)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    start = next((i for i, line in enumerate(lines) if _BEGIN.fullmatch(line.strip())), None)
    if start is None:
        raise ProbeOutputError("no probe begin line: not the controller probe's output")
    begin = _BEGIN.fullmatch(lines[start].strip())
    assert begin is not None
    nonce = begin["nonce"]
    section_begin = f"{PROBE_MARK} {nonce} begin "
    section_end = f"{PROBE_MARK} {nonce} end "
    sections: dict[str, ProbeSection] = {}
    result: dict[str, object] | None = None
    current: str | None = None
    body: list[str] = []
    for raw in lines[start + 1 :]:
        line = raw.strip()
        if current is None:
            if line.startswith(section_begin):
                current = line[len(section_begin) :]
                body = []
            elif line.startswith(PROBE_RESULT_PREFIX):
                result = _result(line[len(PROBE_RESULT_PREFIX) :], nonce)
            continue
        if line.startswith(section_end):
            name, _, fields = line[len(section_end) :].partition(" ")
            match = _END_FIELDS.fullmatch(fields)
            if name != current or match is None:
                raise ProbeOutputError(f"malformed end marker of section {excerpt(current, 40)!r}")
            sections[current] = ProbeSection(
                name=current,
                text="\n".join(body),
                exit_code=int(match["rc"]),
                millis=int(match["ms"]),
                timed_out=match["to"] == "1",
                truncated=match["tr"] == "1",
            )
            current = None
        else:
            body.append(raw.rstrip())
    elapsed = result.get("elapsed_ms") if result else None
    error = result.get("error") if result else None
    return ProbeOutput(
        version=int(begin["version"]),
        nonce=nonce,
        sections=sections,
        complete=bool(result and result.get("complete") is True),
        elapsed_ms=elapsed if isinstance(elapsed, int) else None,
        error=excerpt(error) if isinstance(error, str) else None,
    )


def _result(payload: str, nonce: str) -> dict[str, object] | None:
    try:
        result = json.loads(payload)
    except ValueError:
        return None
    if not isinstance(result, dict) or result.get("nonce") != nonce:
        return None  # someone else's line, or a stale one
    return result


def format_probe_output(
    sections: Iterable[ProbeSection], *, nonce: str = "0123456789abcdef", complete: bool = True
) -> str:
    """The probe's output for given sections: for simulations and tests of everything downstream.

    ``parse_probe_output(format_probe_output(s))`` gives ``s`` back; the real script's output has
    the same shape (a test runs both through the parser).
    """
    out = [f"{PROBE_MARK} probe begin version=1 nonce={nonce}"]
    summary: dict[str, list[int]] = {}
    for section in sections:
        out.append(f"{PROBE_MARK} {nonce} begin {section.name}")
        if section.text:
            out.extend(section.text.split("\n"))
        out.append(
            f"{PROBE_MARK} {nonce} end {section.name} rc={section.exit_code} ms={section.millis} "
            f"timed_out={int(section.timed_out)} truncated={int(section.truncated)}"
        )
        summary[section.name] = [section.exit_code, section.millis, int(section.timed_out)]
    if complete:
        result = {"version": 1, "nonce": nonce, "complete": True, "elapsed_ms": 0, "sections": summary}
        out.append(PROBE_RESULT_PREFIX + json.dumps(result, separators=(",", ":")))
    return "\n".join(out) + "\n"
