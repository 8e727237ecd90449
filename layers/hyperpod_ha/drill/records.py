"""The drill on record: its summary on the notification topic (SNS) and a resolved OpsItem
(OpsCenter)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from hyperpod_ha.acting.notice_topic import NoticeTopic
from hyperpod_ha.aws_errors import error_code
from hyperpod_ha.incidents.keys import CATEGORY, SOURCE
from hyperpod_ha.incidents.ops_item import ops_item_tags
from hyperpod_ha.redaction import scrub_text
from hyperpod_ha.topic_messages import TopicMessage

if TYPE_CHECKING:
    from mypy_boto3_sns import SNSClient
    from mypy_boto3_ssm import SSMClient


@dataclass(frozen=True)
class DrillRecords:
    """The drill on record: a plain-text summary to the topic, a resolved OpsItem."""

    ssm: SSMClient
    sns: SNSClient
    topic_arn: str | None
    region: str = "us-east-1"  # for the message's commands and console links
    stack_name: str | None = None  # for the message's commands (the template's AWS::StackName)

    def notify(self, message: TopicMessage) -> str | None:
        """The drill's message on the topic (the one form, redacted); its MessageId."""
        return NoticeTopic(self.sns, self.topic_arn).notify(message)

    def record(self, cluster: str, execution_id: str, title: str, body: str, data: Mapping[str, str]) -> str:
        """A resolved OpsItem for this drill (one per execution, also when retried)."""
        dedup = f"{SOURCE}:{cluster}:drill:{hashlib.sha256(execution_id.encode()).hexdigest()[:16]}"
        operational: dict[str, Any] = {
            "/aws/dedup": {"Type": "SearchableString", "Value": f'{{"dedupString": "{dedup}"}}'},
            "hyperpod-ha:cluster": {"Type": "SearchableString", "Value": cluster},
            "hyperpod-ha:kind": {"Type": "SearchableString", "Value": "drill"},
            "hyperpod-ha:execution": {"Type": "SearchableString", "Value": execution_id},
            **{
                f"hyperpod-ha:{key}": {"Type": "String", "Value": scrub_text(value)[:4000]}
                for key, value in data.items()
            },
        }
        try:
            ops_item_id = self.ssm.create_ops_item(
                Title=scrub_text(title)[:1024],
                Description=scrub_text(body)[:2048],
                Source=SOURCE,
                Category=CATEGORY,
                Severity="4",
                OperationalData=operational,
                # Without them IAM refuses the create (and could not let us resolve it).
                Tags=ops_item_tags(cluster),
            )["OpsItemId"]
        except ClientError as error:
            # A retried step: the first attempt created it and stopped before resolving it.
            existing = error.response.get("OpsItemId")
            if error_code(error) != "OpsItemAlreadyExistsException" or not existing:
                raise
            ops_item_id = str(existing)
        self.ssm.update_ops_item(OpsItemId=ops_item_id, Status="Resolved")
        return ops_item_id
