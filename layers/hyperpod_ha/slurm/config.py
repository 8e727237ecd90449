"""Slurm's configuration: ``scontrol show config`` and the probe's excerpt of slurm.conf.

``scontrol show config`` prints ``Key = value`` lines, ``SlurmctldHost[i] = name(address)``;
slurm.conf has ``Key=value`` lines. Before Slurm 18.08 the controllers were
``ControlMachine``/``ControlAddr`` and ``BackupController``/``BackupAddr``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from hyperpod_ha.slurm.errors import SlurmOutputError
from hyperpod_ha.slurm.text import excerpt, split_lines


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
# A slurm.conf line is "Key = value # comment": split at the first "=" and "#" and stripped,
# not matched whole (a lazy value beside "\s*" made one long line quadratic).
_CONF_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HOST_VALUE = re.compile(r"(?P<name>[^\s()]+)(?:\((?P<address>[^\s()]+)\))?")
_SECONDS = re.compile(r"(?P<n>[0-9]{1,9})(?:\s*sec)?")


def parse_show_config(text: str) -> SlurmConfig:
    """``scontrol show config`` (the probe keeps only the lines it needs)."""
    pairs: list[tuple[str, int | None, str]] = []
    for line in split_lines(text):
        match = _SHOW_CONFIG_LINE.fullmatch(line)
        if match is None:
            continue  # the header ("Configuration data as of ...") and ping lines at the end
        key = match["key"].split("[", 1)[0]
        pairs.append((key, int(match["i"]) if match["i"] is not None else None, match["value"]))
    if not pairs:
        raise SlurmOutputError("no 'Key = value' line: not scontrol show config output")
    return _config_from_pairs("scontrol", pairs)


def parse_slurm_conf(text: str) -> SlurmConfig:
    """The probe's ``slurm_conf`` section: ``path=<file>`` then the file's relevant lines."""
    lines = split_lines(text)
    if not lines or not lines[0].startswith("path="):
        raise SlurmOutputError("slurm_conf section does not start with path=")
    if not lines[0][5:]:
        raise SlurmOutputError("no readable slurm.conf found")
    pairs: list[tuple[str, int | None, str]] = []
    for line in lines[1:]:
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        key = key.rstrip()
        if not sep or not _CONF_KEY.fullmatch(key):
            raise SlurmOutputError(f"not a slurm.conf line: {excerpt(line, 80)!r}")
        pairs.append((key, None, value.partition("#")[0].strip()))
    return _config_from_pairs("slurm.conf", pairs)


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


def _value(raw: str) -> str | None:
    value = raw.strip()
    return None if value in ("", "(null)") else value


def _legacy_host(name: str, address: str | None) -> str:
    return f"{name}({address})" if address else name


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
