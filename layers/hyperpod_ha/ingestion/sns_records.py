"""The SNS event around a controller status notification: its records, each checked before the
message in it is parsed (:func:`hyperpod_ha.notifications.parse_controller_notification`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hyperpod_ha.json_input import check_depth
from hyperpod_ha.notifications import NotificationRejected
from hyperpod_ha.request_fields import MAX_ID_CHARS


def sns_records(event: object) -> list[object]:
    """The records of an SNS event; :class:`NotificationRejected` when it is not one."""
    records = event.get("Records") if isinstance(event, Mapping) else None
    if not isinstance(records, list):
        raise NotificationRejected("the event has no SNS Records list")
    return records


def check_sns_record(record: object, topic_arn: str) -> Mapping[str, Any]:
    """The record's ``Sns`` object, with the fields the handler reads of the right types, from
    the stack's own failover topic ``topic_arn`` (SlurmFailoverTopicArn) only."""
    sns = record.get("Sns") if isinstance(record, Mapping) else None
    if not isinstance(sns, Mapping):
        raise NotificationRejected("the record has no Sns object")
    # Before anything walks it (the idempotency layer copies the record recursively).
    check_depth(record, NotificationRejected, what="the record")
    message_id = sns.get("MessageId")
    if not isinstance(message_id, str) or not message_id:
        raise NotificationRejected("the record has no MessageId")
    if len(message_id) > MAX_ID_CHARS:
        # SNS message ids are UUIDs; a longer one would become the run's trigger id and lease key.
        raise NotificationRejected(f"the record's MessageId is longer than {MAX_ID_CHARS} characters")
    if sns.get("TopicArn") != topic_arn:
        # A record of another topic (another account's, or a direct invoke) is not this stack's input.
        raise NotificationRejected("the record's TopicArn is not the stack's SlurmFailoverTopicArn")
    for key in ("Subject", "Message", "Timestamp"):
        if not isinstance(sns.get(key), str | None):
            raise NotificationRejected(f"the record's {key} is not a string")
    return sns
