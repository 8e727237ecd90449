"""The StateSaveLocation directory as the probe found it: mount, owner, who may write it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hyperpod_ha.slurm.text import excerpt, key_values, yes_no


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
    write_ms: int | None = None  # how long creating and removing a file took (root's)


def parse_state_save(text: str) -> StateSave:
    values = dict(key_values(text))
    return StateSave(
        path=values.get("path") or None,
        exists=yes_no(values.get("exists")),
        owner=values.get("owner") or None,
        mount_target=values.get("mount_target") or None,
        fstype=values.get("fstype") or None,
        source=values.get("source") or None,
        writable=yes_no(values.get("writable")),
        write_error=excerpt(values["write_error"]) if values.get("write_error") else None,
        slurm_user=values.get("slurm_user") or None,
        writable_by_slurm_user=yes_no(values.get("writable_by_slurm_user")),
        slurm_user_write_error=(
            excerpt(values["slurm_user_write_error"]) if values.get("slurm_user_write_error") else None
        ),
        error=excerpt(values["error"]) if values.get("error") else None,
        write_ms=int(values["write_ms"]) if re.fullmatch(r"[0-9]{1,9}", values.get("write_ms", "")) else None,
    )
