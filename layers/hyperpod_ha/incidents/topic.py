"""The notification topic incidents are announced on; none when the stack has none."""

from __future__ import annotations

from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from hyperpod_ha import topic_messages
from hyperpod_ha.aws_errors import error_code
from hyperpod_ha.incidents.errors import IncidentFailed

if TYPE_CHECKING:
    from mypy_boto3_sns import SNSClient


class Topic:
    def __init__(self, sns: SNSClient, arn: str | None) -> None:
        self.sns = sns
        self.arn = arn

    def publish(self, message: topic_messages.TopicMessage) -> None:
        assert self.arn, "publish only to a configured topic"
        try:
            topic_messages.publish(self.sns, self.arn, message)
        except ClientError as error:
            raise IncidentFailed(f"SNS Publish failed: {error_code(error)}") from error
