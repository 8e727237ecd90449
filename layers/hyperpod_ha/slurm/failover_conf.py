"""What the next failover needs from one controller, as the probe's ``failover_conf`` section
says it: where its slurm.conf resolves and a hash of it, its slurmctld's version, and the
``SlurmctldPrimaryOnProg``/``SlurmctldPrimaryOffProg`` programs (in the running configuration and
in this node's slurm.conf) with whether each is an executable file.

``key=value`` lines. A program's line is there only when its configuration could be read
(``running_on_prog=`` empty: read, not set); ``<slot>_state`` follows a program that is set. A
value that is not of its form (a hash that is not 64 hex digits, a version with blanks, an
unknown state) is unknown, never an error: one odd field must not hide the others.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal, cast

from hyperpod_ha.slurm.text import excerpt, key_values, yes_no

ProgramState = Literal["executable", "not_executable", "missing"]
PROGRAM_STATES: Final = frozenset({"executable", "not_executable", "missing"})
# The four programs the probe checks: where each was read, and which one.
PROGRAM_SLOTS: Final = ("running_on_prog", "running_off_prog", "file_on_prog", "file_off_prog")

_SHA256 = re.compile(r"[0-9a-f]{64}")
# "24.11.5", "25.11.7-1", "23.02.0-0rc1": digits first, no blanks.
_VERSION = re.compile(r"[0-9]{1,4}\.[0-9]{1,4}[0-9A-Za-z.+~_-]{0,40}")


@dataclass(frozen=True)
class PrimaryProgram:
    """One of SlurmctldPrimaryOnProg/OffProg as one configuration names it."""

    configured: bool | None  # None: that configuration could not be read
    path: str | None = None
    state: ProgramState | None = None  # None: not set, or not checked


@dataclass(frozen=True)
class FailoverConf:
    version: str | None = None  # `slurmctld -V` of this node
    version_error: str | None = None
    programs: Mapping[str, PrimaryProgram] = field(default_factory=dict)  # by PROGRAM_SLOTS
    conf_path: str | None = None  # where the probe found slurm.conf
    conf_link: bool | None = None  # that path is a symbolic link
    conf_resolved: str | None = None  # the file it resolves to
    conf_mount_target: str | None = None
    conf_fstype: str | None = None
    conf_source: str | None = None  # the file system's device (findmnt's SOURCE)
    conf_sha256: str | None = None
    conf_error: str | None = None

    def program(self, slot: str) -> PrimaryProgram:
        return self.programs.get(slot, PrimaryProgram(configured=None))


def parse_failover_conf(text: str) -> FailoverConf:
    """The ``failover_conf`` section; never raises: a field out of its form is unknown."""
    values = dict(key_values(text))
    programs: dict[str, PrimaryProgram] = {
        slot: _program(values, slot) for slot in PROGRAM_SLOTS if slot in values
    }
    version = values.get("version") or ""
    sha256 = values.get("conf_hash") or ""  # sha256sum's (keys have no digits)
    return FailoverConf(
        version=version if _VERSION.fullmatch(version) else None,
        version_error=_text(values.get("version_error")),
        programs=programs,
        conf_path=_text(values.get("conf_path")),
        conf_link=yes_no(values.get("conf_link")),
        conf_resolved=_text(values.get("conf_resolved")),
        conf_mount_target=_text(values.get("conf_mount_target")),
        conf_fstype=_text(values.get("conf_fstype")),
        conf_source=_text(values.get("conf_source")),
        conf_sha256=sha256 if _SHA256.fullmatch(sha256) else None,
        conf_error=_text(values.get("conf_error")),
    )


def _program(values: Mapping[str, str], slot: str) -> PrimaryProgram:
    path = _text(values[slot])
    state = values.get(f"{slot}_state")
    known = cast("ProgramState", state) if state in PROGRAM_STATES and path else None
    return PrimaryProgram(configured=path is not None, path=path, state=known)


def _text(value: str | None) -> str | None:
    return excerpt(value) if value else None
