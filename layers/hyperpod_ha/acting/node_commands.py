"""A node script's Session document run on a controller through the stack's command transport,
and what the script printed.

A node script (``drill/drill_node.sh``, ``restore/restore_node.sh``) prints ``key=value`` lines
and rows of words, then ``HYPERPOD_HA_RESULT rc=<n>`` last (``controller_node.sh``'s
``finish``): the transports that report no exit code still say how it ended, and a script cut
short is told from one that failed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from hyperpod_ha.commands import CommandError, CommandRequest, CommandRunner
from hyperpod_ha.errors import HyperpodHaError, InputRejected

RESULT_MARK: Final = "HYPERPOD_HA_RESULT"
VALUE_LIMIT: Final = 400
MAX_ROWS: Final = 10_000
_RC: Final = re.compile(r"rc=(\d{1,10})")  # bounded: int() refuses 4300 digits


class ScriptOutputRejected(InputRejected):
    """The script's output does not end with its result line: it did not finish."""


@dataclass(frozen=True)
class ScriptOutput:
    """The script's exit code (its result line), its ``key=value`` lines (the first of each key,
    each value cut at 400 characters) and its other lines as rows of words."""

    rc: int
    values: dict[str, str] = field(default_factory=dict)
    rows: tuple[tuple[str, ...], ...] = ()


def parse_script_output(text: str) -> ScriptOutput:
    values: dict[str, str] = {}
    rows: list[tuple[str, ...]] = []
    rc: int | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith(RESULT_MARK):
            found = _RC.search(line)
            rc = int(found.group(1)) if found else None
        elif "=" in line and " " not in line.split("=", 1)[0]:
            key, value = line.split("=", 1)
            values.setdefault(key, value[:VALUE_LIMIT])
        elif line and len(rows) < MAX_ROWS:
            rows.append(tuple(line.split()))
    if rc is None:
        raise ScriptOutputRejected("the node script did not finish (no result line)")
    return ScriptOutput(rc, values, tuple(rows))


@dataclass(frozen=True)
class NodeDocuments:
    """The node scripts' Session documents, run through the stack's command transport; a command
    that could not run, or a script that did not finish, raises ``failed`` (the feature's error,
    which its state machine catches by name)."""

    runner: CommandRunner
    deadline_seconds: float
    failed: type[HyperpodHaError]

    def run(self, target: str, document: str, parameters: dict[str, list[str]] | None = None) -> ScriptOutput:
        request = CommandRequest(target, document, self.deadline_seconds, parameters or {})
        try:
            result = self.runner.run(request)
        except CommandError as error:
            raise self.failed(f"{type(error).__name__}: {error.reason}") from error
        try:
            return parse_script_output(result.stdout)
        except ScriptOutputRejected as error:
            raise self.failed(f"{error}; exit code {result.exit_code}") from error
