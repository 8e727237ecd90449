"""``sinfo``: how many compute nodes are in which state."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hyperpod_ha.slurm.errors import SlurmOutputError
from hyperpod_ha.slurm.text import excerpt, nonempty_lines


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
    for line in nonempty_lines(text):
        match = _SINFO_LINE.fullmatch(line)
        if match is None:
            raise SlurmOutputError(f"not a '<state> <count>' line: {excerpt(line, 80)!r}")
        counts.append(NodeStateCount(state=match["state"], count=int(match["count"])))
    return counts
