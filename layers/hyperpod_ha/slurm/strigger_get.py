"""``strigger --get``: the triggers the active slurmctld holds, and which of the stack's are set.

Slurm prints a header and one row per pending trigger (``src/strigger/strigger.c``, the same in
24.11 and 25.11)::

    TRIG_ID RES_TYPE   RES_ID TYPE                                OFFSET USER     FLAGS PROGRAM
          1 slurmctld       * backup_slurmctld_failure                 0 slurm    PERM  <PROGRAM> <event>

(``%7u %-9s %7s %-35s %6d %-8s %-5s %s``: FLAGS is ``PERM`` or blank, the program last, with its
arguments, as it was set). A trigger of the stack's is one whose TYPE is one of
:data:`~hyperpod_ha.slurm.triggers.TRIGGER_EVENTS`, flagged ``PERM`` (else it fires once and is
gone) and whose program is :data:`TRIGGER_PROGRAM_PATH` followed by that event. Never raises: a row out
of that form (the header, a message, another user's odd trigger) is skipped, and at most
:data:`MAX_ROWS` rows of at most :data:`MAX_LINE` characters are read.

The probe's ``slurm_triggers`` section (:func:`parse_trigger_check`) holds this node's copy of the
program (``program=``, ``program_state=``, ``program_topic=``: the topic it publishes to), then
the table's rows that run it, or ``get_error=`` (the section's exit code is strigger's).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from hyperpod_ha.slurm.text import excerpt, key_values, split_lines
from hyperpod_ha.slurm.triggers import TRIGGER_EVENTS

# Where the stack's install writes the program on every controller (slurm_triggers_node.sh, and
# the probe reads it there: a test keeps the three equal).
TRIGGER_PROGRAM_PATH: Final = "/usr/local/libexec/hyperpod-ha/slurm-trigger"
PERMANENT: Final = "PERM"
MAX_ROWS: Final = 2000
MAX_LINE: Final = 1024
_ROW: Final = re.compile(
    r"\s*(?P<id>[0-9]{1,10})\s+(?P<res_type>[a-z]{1,16})\s+(?P<res_id>\S{1,256})\s+(?P<type>[a-z_]{1,48})"
    r"\s+(?P<offset>-?[0-9]{1,6})\s+(?P<user>\S{1,64}) (?P<rest>.*)"
)


@dataclass(frozen=True)
class TriggerRow:
    """One trigger as ``strigger --get`` lists it."""

    trig_id: int
    res_type: str  # slurmctld, slurmdbd, database, node, job, other
    res_id: str
    type: str  # the event: backup_slurmctld_failure, down, fini, ...
    offset: int
    user: str
    flags: str  # "PERM" or ""
    program: str  # the path and its arguments, as set

    def is_ours(self, program_path: str = TRIGGER_PROGRAM_PATH) -> bool:
        """The stack's trigger for its event: permanent, our program with the event as argument."""
        return self.flags == PERMANENT and self.program == f"{program_path} {self.type}"


def parse_strigger_get(text: str) -> tuple[TriggerRow, ...]:
    """The rows of ``strigger --get``'s table; anything else in the text is skipped."""
    rows: list[TriggerRow] = []
    for line in split_lines(text[: MAX_ROWS * MAX_LINE]):
        if len(rows) >= MAX_ROWS:
            break
        match = _ROW.fullmatch(line[:MAX_LINE])
        if match is None:
            continue
        rest = match["rest"].strip()
        flags = PERMANENT if rest == PERMANENT or rest.startswith(PERMANENT + " ") else ""
        program = rest.removeprefix(flags).strip() if flags else rest
        if not program.startswith("/"):  # strigger refuses any other program
            continue
        rows.append(
            TriggerRow(
                trig_id=int(match["id"]),
                res_type=match["res_type"],
                res_id=match["res_id"],
                type=match["type"],
                offset=int(match["offset"]),
                user=match["user"],
                flags=flags,
                program=program,
            )
        )
    return tuple(rows)


def installed_events(rows: Iterable[TriggerRow], program_path: str = TRIGGER_PROGRAM_PATH) -> tuple[str, ...]:
    """The stack's events that have a trigger of ours, in :data:`TRIGGER_EVENTS`'s order."""
    ours = {row.type for row in rows if row.is_ours(program_path)}
    return tuple(event.name for event in TRIGGER_EVENTS if event.name in ours)


def missing_events(rows: Iterable[TriggerRow], program_path: str = TRIGGER_PROGRAM_PATH) -> tuple[str, ...]:
    """The stack's events without a trigger of ours, in :data:`TRIGGER_EVENTS`'s order."""
    present = set(installed_events(rows, program_path))
    return tuple(event.name for event in TRIGGER_EVENTS if event.name not in present)


_STATES: Final = frozenset({"executable", "not_executable", "missing", "unknown"})
_PATH: Final = re.compile(r"/[A-Za-z0-9._/-]{1,255}")
_TOPIC: Final = re.compile(r"arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,256}")


@dataclass(frozen=True)
class TriggerCheck:
    """The probe's look at the Slurm triggers from one controller."""

    program: str = TRIGGER_PROGRAM_PATH  # where the node looked for it (the tests' own place)
    program_state: str | None = None  # executable, not_executable, missing, unknown
    program_topic: str | None = None  # the topic this node's program publishes to
    answered: bool | None = None  # strigger --get answered (None: not known)
    rows: tuple[TriggerRow, ...] = ()
    error: str | None = None  # why strigger --get did not answer

    @property
    def missing(self) -> tuple[str, ...] | None:
        """The stack's events without a trigger of ours; None when strigger did not answer."""
        return missing_events(self.rows, self.program) if self.answered else None


def parse_trigger_check(text: str, exit_code: int) -> TriggerCheck:
    """The probe's ``slurm_triggers`` section and its exit code (strigger's, when it failed).
    Never raises: a value out of its form is unknown."""
    values = dict(key_values(text))
    state = values.get("program_state")
    topic = values.get("program_topic") or ""
    answered = exit_code == 0
    error = values.get("get_error")
    program = values.get("program") or ""
    return TriggerCheck(
        program=program if _PATH.fullmatch(program) else TRIGGER_PROGRAM_PATH,
        program_state=state if state in _STATES else None,
        program_topic=topic if _TOPIC.fullmatch(topic) else None,
        answered=answered,
        rows=parse_strigger_get(text) if answered else (),
        error=None if answered else excerpt(f"strigger --get exited {exit_code}: {error or 'no output'}"),
    )
