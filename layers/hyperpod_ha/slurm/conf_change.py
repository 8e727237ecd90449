"""What changed in a controller's configuration and how its slurmctld last died by a signal, as
the probe's ``conf_change`` section says it: ``now=<epoch>``, one ``file <name> mtime=<epoch>
size=<n> sha256=<hex>`` (or ``file <name> missing``) line per file (slurm.conf, topology.conf,
topology.yaml), and the journal's ``signal_exit=<epoch.micro> <host> systemd[1]: slurmctld.service:
Main process exited, code=dumped, status=11/SEGV`` line when there is one. Never raises: a line
out of its form is skipped."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from hyperpod_ha.slurm.text import excerpt, key_values, split_lines

CONF_FILES: Final = ("slurm.conf", "topology.conf", "topology.yaml")
_FILE = re.compile(
    r"file (?P<name>[a-z.]{1,20}) (?:missing|mtime=(?P<mtime>[0-9]{1,12}) size=[0-9]{1,15} "
    r"sha256=(?P<sha>[0-9a-f]{64})?)"
)
_SIGNAL = re.compile(
    r"(?P<time>[0-9]{1,12})(?:\.[0-9]{1,9})? .*Main process exited, code=(?:killed|dumped), "
    r"status=(?P<status>[0-9]{1,3}/[A-Z]{2,10})"
)


@dataclass(frozen=True)
class ConfFile:
    name: str
    exists: bool
    mtime: int | None = None
    sha256: str | None = None


@dataclass(frozen=True)
class ConfChange:
    now: int | None = None
    files: tuple[ConfFile, ...] = ()
    signal_time: int | None = None  # when systemd saw slurmctld killed by a signal
    signal_status: str | None = None  # "11/SEGV"
    error: str | None = None


def parse_conf_change(text: str) -> ConfChange:
    values = dict(key_values(text))
    files: dict[str, ConfFile] = {}
    for line in split_lines(text):
        found = _FILE.fullmatch(line)
        if found is None or found["name"] not in CONF_FILES or found["name"] in files:
            continue
        mtime = int(found["mtime"]) if found["mtime"] else None
        files[found["name"]] = ConfFile(found["name"], mtime is not None, mtime, found["sha"])
    signal = _SIGNAL.match(values.get("signal_exit") or "")
    now = values.get("now") or ""
    return ConfChange(
        now=int(now) if now.isdigit() and len(now) <= 12 else None,
        files=tuple(files.values()),
        signal_time=int(signal["time"]) if signal else None,
        signal_status=signal["status"] if signal else None,
        error=excerpt(values["error"]) if values.get("error") else None,
    )
