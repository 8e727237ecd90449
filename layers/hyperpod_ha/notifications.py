"""The plain-text SNS message HyperPod's lifecycle scripts publish when a slurmctld changes status.

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

SUBJECT = "Slurm Controller Status Change"

_MESSAGE = re.compile(
    r"""
    \s*Slurm\s+Controller\s+is\s+(?P<status>ON|OFF)\s*,?\s*
    \(\s*(?P<address>[^,()\s]+)\s*,\s*(?P<role>Primary|Backup)\s+Node\s*\)\s*
    """,
    re.VERBOSE,
)


class NotificationRejected(ValueError):
    """The SNS record is not a controller status notification. The reason is safe to log."""


@dataclass(frozen=True)
class ControllerNotification:
    status: Literal["ON", "OFF"]
    address: str
    role: Literal["primary", "backup"]


def parse_controller_notification(subject: str | None, message: str | None) -> ControllerNotification:
    """Parse one notification; raise :class:`NotificationRejected` (a ValueError) on anything else."""
    if (subject or "").strip() != SUBJECT:
        raise NotificationRejected(f"subject is not {SUBJECT!r}")
    if not message or not message.strip():
        raise NotificationRejected("message is empty")
    match = _MESSAGE.fullmatch(message)
    if match is None:
        raise NotificationRejected(
            "message is not 'Slurm Controller is ON|OFF (<address>, Primary|Backup Node)'"
        )
    address = match["address"]
    try:
        ipaddress.ip_address(address)
    except ValueError:
        raise NotificationRejected("address in the message is not an IP address") from None
    status: Literal["ON", "OFF"] = "ON" if match["status"] == "ON" else "OFF"
    role: Literal["primary", "backup"] = "primary" if match["role"] == "Primary" else "backup"
    return ControllerNotification(status=status, address=address, role=role)
