"""The public path of the controller status message parser, kept in :mod:`hyperpod_ha.ingestion`."""

from hyperpod_ha.ingestion.controller_messages import (
    MAX_MESSAGE_CHARS,
    SUBJECT,
    ControllerNotification,
    NotificationRejected,
    check_sns_record,
    parse_controller_notification,
    sns_records,
)

__all__ = [
    "MAX_MESSAGE_CHARS",
    "SUBJECT",
    "ControllerNotification",
    "NotificationRejected",
    "check_sns_record",
    "parse_controller_notification",
    "sns_records",
]
