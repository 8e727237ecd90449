"""``<StateSaveLocation>/heartbeat``: the 16 bytes the active controller writes, and the probe's
section about the file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from hyperpod_ha.slurm.errors import SlurmOutputError
from hyperpod_ha.slurm.text import excerpt, integer, key_values, yes_no

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
    values = dict(key_values(text))
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
        exists=yes_no(values.get("exists")),
        size=integer(values.get("size"), "size"),
        mtime=integer(values.get("mtime"), "mtime"),
        now=integer(values.get("now"), "now"),
        beat_time=beat,
        writer_index=writer,
        error=excerpt(error) if error else None,
    )
