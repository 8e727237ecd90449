"""HyperPod's controller status notification: the plain-text SNS message its lifecycle scripts
publish when a slurmctld changes status, parsed. Its home is here, at the top of the package,
because ``hyperpod_ha.notifications.parse_controller_notification`` is a public contract
(design.md); ControllerStatusFunction reads the SNS record around it
(:mod:`hyperpod_ha.ingestion.sns_records`).

Observed shapes (domain.md)::

    Slurm Controller is ON, (10.1.2.3, Primary Node)
    Slurm Controller is OFF (10.1.4.5, Backup Node)

The comma after ON comes from a quoting slip in the generator. "Primary"/"Backup" says which
script ran, not the node's configured role, so one message never proves a failover.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Literal

from hyperpod_ha.errors import InputRejected

SUBJECT = "Slurm Controller Status Change"
# The observed messages are about 50 characters; anything much longer is not one of them.
# Checked before any pattern runs, so a 1 MiB message costs one length test.
MAX_MESSAGE_CHARS = 512

# Matched against the message with every whitespace run collapsed to one space: no two
# unbounded quantifiers touch, so matching is linear (the old pattern's adjacent \s* runs
# backtracked quadratically on long whitespace).
_MESSAGE = re.compile(
    r"Slurm Controller is (?P<status>ON|OFF) ?,? ?"
    r"\( ?(?P<address>[^,() ]+) ?, ?(?P<role>Primary|Backup) Node ?\)"
)


class NotificationRejected(InputRejected):
    """The SNS record is not a controller status notification. The reason is safe to log."""


@dataclass(frozen=True)
class ControllerNotification:
    status: Literal["ON", "OFF"]
    address: str
    role: Literal["primary", "backup"]


def parse_controller_notification(subject: str | None, message: str | None) -> ControllerNotification:
    """Parse one notification; raise :class:`NotificationRejected` (a ValueError too) on anything else."""
    if subject is None or len(subject) > len(SUBJECT) + 16 or subject.strip() != SUBJECT:
        raise NotificationRejected(f"subject is not {SUBJECT!r}")
    if message is not None and len(message) > MAX_MESSAGE_CHARS:
        raise NotificationRejected(f"message is longer than {MAX_MESSAGE_CHARS} characters")
    if not message or not message.strip():
        raise NotificationRejected("message is empty")
    match = _MESSAGE.fullmatch(" ".join(message.split()))
    if match is None:
        raise NotificationRejected(
            "message is not 'Slurm Controller is ON|OFF (<address>, Primary|Backup Node)'"
        )
    address = match["address"]
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        raise NotificationRejected("address in the message is not an IP address") from None
    # Python accepts "fe80::1%<anything>" as an IPv6 address: the zone id is free text.
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.scope_id is not None:
        raise NotificationRejected("address in the message carries an IPv6 zone id")
    status: Literal["ON", "OFF"] = "ON" if match["status"] == "ON" else "OFF"
    role: Literal["primary", "backup"] = "primary" if match["role"] == "Primary" else "backup"
    return ControllerNotification(status=status, address=address, role=role)
