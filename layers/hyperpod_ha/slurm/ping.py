"""``scontrol ping``: which configured controller answers.

One ``Slurmctld(<label>) at <host> is UP|DOWN`` line per configured controller in
configuration order; the label is ``primary`` for the first, ``backup`` for the second of two,
``backup<i>`` (the 0-based position) with three or more. When one is down and the caller is
root, a three-line banner follows. The label is the configured position, not who is active: a
standby backup answers UP too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hyperpod_ha.slurm.errors import SlurmOutputError
from hyperpod_ha.slurm.text import excerpt, split_lines


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
    for line in split_lines(text):
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
