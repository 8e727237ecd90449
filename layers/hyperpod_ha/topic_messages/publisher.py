"""Publishing messages to people on the stack's notification topic, optionally at most once per
event (a marker in the state table, written before the message is published), and the
operator's silence its callers ask about first (:meth:`TopicPublisher.silenced`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hyperpod_ha import state_table
from hyperpod_ha.silences import Silence, Silences
from hyperpod_ha.topic_messages.form import TopicMessage, publish

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_sns import SNSClient


@dataclass(frozen=True)
class TopicPublisher:
    sns: SNSClient
    topic_arn: str
    dynamodb: DynamoDBClient
    table: str
    ttl_seconds: int

    def publish_once(self, cluster: str, event_id: str, message: TopicMessage, now: int) -> bool:
        """Publish unless a message went out for this event; False when one did."""
        marker = state_table.notice_key(cluster, event_id)
        if not state_table.mark_notice(self.dynamodb, self.table, marker, now + self.ttl_seconds):
            return False
        try:
            self.publish(message)
        except Exception:
            # Forget the marker so the retried delivery publishes the message.
            state_table.forget_notice(self.dynamodb, self.table, marker)
            raise
        return True

    def publish(self, message: TopicMessage) -> None:
        publish(self.sns, self.topic_arn, message)

    def silenced(self, cluster: str) -> Silence | None:
        """The operator's silence in force on ``cluster`` now: then nothing is published (the
        caller says so in its result; no marker is written, so nothing is told after it ends
        either: the event happened in the window)."""
        return Silences(self.dynamodb, self.table).in_force(cluster)
