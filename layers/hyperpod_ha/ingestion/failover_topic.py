"""The failover topic's two messages, told apart by their subject: HyperPod's controller status
notification (``Slurm Controller Status Change``, the lifecycle scripts' ON/OFF programs) and
Slurm's own trigger (``Slurm Trigger``, the program of the triggers the stack installs). Each is
parsed by its own parser; anything else is refused with a reason naming both subjects."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from hyperpod_ha.notifications import SUBJECT as STATUS_SUBJECT
from hyperpod_ha.notifications import (
    ControllerNotification,
    NotificationRejected,
    parse_controller_notification,
)

if TYPE_CHECKING:
    from hyperpod_ha.slurm.triggers import TriggerMessage

# hyperpod_ha.slurm.triggers.SUBJECT (a unit test keeps the two equal): the slurm package is
# imported only for a record that carries it, so the function's INIT stays without it.
TRIGGER_SUBJECT: Final = "Slurm Trigger"
# Either subject with some whitespace around it; a longer one is neither (checked before strip).
_SUBJECT_CHARS: Final = max(len(STATUS_SUBJECT), len(TRIGGER_SUBJECT)) + 16


def parse_failover_topic_message(
    subject: str | None, message: str | None
) -> ControllerNotification | TriggerMessage:
    """The record's message parsed by its subject's parser. Raises
    :class:`~hyperpod_ha.notifications.NotificationRejected` or
    :class:`~hyperpod_ha.slurm.triggers.TriggerMessageRejected` (both ``InputRejected``)."""
    said = subject.strip() if subject is not None and len(subject) <= _SUBJECT_CHARS else None
    if said == TRIGGER_SUBJECT:
        from hyperpod_ha.slurm.triggers import parse_trigger_message

        return parse_trigger_message(subject, message)
    if said == STATUS_SUBJECT:
        return parse_controller_notification(subject, message)
    raise NotificationRejected(f"subject is neither {STATUS_SUBJECT!r} nor {TRIGGER_SUBJECT!r}")
