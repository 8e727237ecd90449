"""Slurm's own triggers, which the stack installs on a cluster: the events (``strigger``'s options,
Slurm's names in ``strigger --get``), and the message their program publishes on the cluster's
failover topic, formed and parsed.

The active slurmctld fires these itself: it pings the other SlurmctldHosts every SlurmctldTimeout
and fires ``backup_slurmctld_failure`` for a silent one (``controller.c`` ``ping_controllers``,
the same in 24.11 and 25.11), so a dead standby is an event rather than the watchdog's next
tick. Each is set with ``--flags=PERM`` (a trigger fires once otherwise) by SlurmUser or root,
and slurmctld runs its program, as that user, on the controller in control.

The message, plain text like HyperPod's ON/OFF program's, one line::

    Subject: Slurm Trigger
    Slurm trigger backup_slurmctld_failure fired on ctl1 at 2026-12-06T17:00:00Z

``on`` names the host whose slurmctld ran the program (the controller in control), ``at`` the
UTC time the program ran. Which standby died is not in it: Slurm does not tell the program, and
the run it starts finds out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from hyperpod_ha.errors import InputRejected
from hyperpod_ha.human_time import parse_utc

SUBJECT: Final = "Slurm Trigger"
# The message is about 90 characters; a longer one is not ours (checked before any pattern runs).
MAX_MESSAGE_CHARS: Final = 256
# A host name as slurm.conf's SlurmctldHost names it (RFC 1123 labels).
HOST_CHARS: Final = 253

Effect = Literal["verify", "accounting"]


@dataclass(frozen=True)
class TriggerEvent:
    name: str  # strigger's long option without its dashes; Slurm's own name in ``strigger --get``
    meaning: str  # what happened, for messages and docs
    effect: Effect  # verify: start or join the cluster's verification; accounting: also the incident


TRIGGER_EVENTS: Final[tuple[TriggerEvent, ...]] = (
    TriggerEvent(
        "backup_slurmctld_failure", "a backup slurmctld stopped answering the active one's ping", "verify"
    ),
    TriggerEvent("backup_slurmctld_assumed_control", "a backup slurmctld took control", "verify"),
    TriggerEvent("backup_slurmctld_resumed_operation", "a backup slurmctld answers again", "verify"),
    TriggerEvent("primary_slurmctld_failure", "the primary slurmctld stopped answering", "verify"),
    TriggerEvent("primary_slurmctld_resumed_control", "the primary slurmctld took control back", "verify"),
    TriggerEvent("primary_slurmctld_resumed_operation", "the primary slurmctld answers again", "verify"),
    TriggerEvent("primary_slurmdbd_failure", "slurmctld cannot reach slurmdbd", "verify"),
    TriggerEvent("primary_slurmdbd_resumed_operation", "slurmctld reaches slurmdbd again", "verify"),
    TriggerEvent("primary_database_failure", "slurmdbd cannot reach the accounting database", "verify"),
    TriggerEvent(
        "primary_database_resumed_operation", "slurmdbd reaches the accounting database again", "verify"
    ),
    TriggerEvent(
        "primary_slurmctld_acct_buffer_full",
        "slurmctld's accounting buffer is full: new accounting records are dropped",
        "accounting",
    ),
)
EVENTS: Final = {event.name: event for event in TRIGGER_EVENTS}

_HOST: Final = re.compile(
    r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*"
)
_MESSAGE: Final = re.compile(
    r"Slurm trigger (?P<event>[a-z_]{1,48}) fired on (?P<host>\S{1,253})"
    r" at (?P<at>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"
)


class TriggerMessageRejected(InputRejected):
    """The SNS record is not a Slurm trigger message of ours. The reason is safe to log."""


@dataclass(frozen=True)
class TriggerMessage:
    event: TriggerEvent
    host: str
    at: str  # ISO 8601 UTC, as the program wrote it


def trigger_message(event: str, host: str, at: str) -> str:
    """The message's text (what the program on the controller writes; kept here so both ends
    are one form, and a test runs the program against this)."""
    return f"Slurm trigger {event} fired on {host} at {at}"


def is_trigger_subject(subject: str | None) -> bool:
    return subject is not None and len(subject) <= len(SUBJECT) + 16 and subject.strip() == SUBJECT


def parse_trigger_message(subject: str | None, message: str | None) -> TriggerMessage:
    """Parse one message; raise :class:`TriggerMessageRejected` on anything else."""
    if not is_trigger_subject(subject):
        raise TriggerMessageRejected(f"subject is not {SUBJECT!r}")
    if message is None or not message.strip():
        raise TriggerMessageRejected("message is empty")
    if len(message) > MAX_MESSAGE_CHARS:
        raise TriggerMessageRejected(f"message is longer than {MAX_MESSAGE_CHARS} characters")
    match = _MESSAGE.fullmatch(message.strip())
    if match is None:
        raise TriggerMessageRejected("message is not 'Slurm trigger <event> fired on <host> at <UTC time>'")
    event = EVENTS.get(match["event"])
    if event is None:
        raise TriggerMessageRejected("the event is not one of the triggers the stack installs")
    host = match["host"]
    if len(host) > HOST_CHARS or _HOST.fullmatch(host) is None:
        raise TriggerMessageRejected("the host is not a host name")
    if parse_utc(match["at"]) is None:
        raise TriggerMessageRejected("the time is not a UTC time")
    return TriggerMessage(event=event, host=host, at=match["at"])
