"""The stack's notification topic (SNS) as a drill or a restore tells it: the one form of
every message (``topic_messages``), nothing sent when the stack has no topic."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hyperpod_ha.topic_messages import TopicMessage, publish

if TYPE_CHECKING:
    from mypy_boto3_sns import SNSClient


@dataclass(frozen=True)
class NoticeTopic:
    sns: SNSClient
    topic_arn: str | None

    def notify(self, message: TopicMessage) -> str | None:
        """The message on the topic (redacted, in the one form); its MessageId, or ``None``
        without a topic."""
        return publish(self.sns, self.topic_arn, message) if self.topic_arn else None
