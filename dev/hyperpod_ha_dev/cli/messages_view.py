"""``hyperpod-ha simulate <scenario> --messages``: the page before it pages. Every message the
run published on the stack's notification topic (subject, attributes, body) and every OpsItem
it opened (title, severity, status, operational data), oldest first, as moto's SNS and the
embedded OpsCenter held them at the end of the run."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import boto3

if TYPE_CHECKING:
    from hyperpod_ha_dev.simulation.engine import EmbeddedRun

SOURCE = "hyperpod-ha"


def messages_into(found: dict[str, Any]) -> Callable[[EmbeddedRun], None]:
    """A callback for the finished run: its messages and OpsItems, kept in ``found``."""

    def collect(run: EmbeddedRun) -> None:
        found["messages"] = published(run.stack.ref("NotificationTopic"))
        found["ops_items"] = ops_items()

    return collect


def published(topic_arn: str) -> list[dict[str, Any]]:
    """What moto's SNS holds as published on the topic, oldest first."""
    from moto.sns.models import sns_backends

    _, _, _, region, account, _ = topic_arn.split(":")
    sent = sns_backends[account][region].topics[topic_arn].sent_notifications
    return [
        {
            "subject": subject,
            "attributes": {
                name: value.get("Value", value.get("StringValue"))
                for name, value in (attributes or {}).items()
            },
            "body": body,
        }
        for _, body, subject, attributes, _ in sent
    ]


def ops_items() -> list[dict[str, Any]]:
    """This stack's OpsItems, each with its operational data, oldest first."""
    ssm = boto3.client("ssm")
    filters: list[Any] = [{"Key": "Source", "Values": [SOURCE], "Operator": "Equal"}]
    summaries = ssm.describe_ops_items(OpsItemFilters=filters)["OpsItemSummaries"]
    items = []
    for summary in sorted(summaries, key=lambda item: item["OpsItemId"]):
        item = ssm.get_ops_item(OpsItemId=summary["OpsItemId"])["OpsItem"]
        items.append(
            {
                "ops_item_id": item["OpsItemId"],
                "title": item.get("Title"),
                "severity": item.get("Severity"),
                "status": item.get("Status"),
                "operational_data": {
                    key: value.get("Value") for key, value in (item.get("OperationalData") or {}).items()
                },
            }
        )
    return items


def render_messages(found: Mapping[str, Any]) -> str:
    messages, items = found.get("messages") or [], found.get("ops_items") or []
    lines = [f"published on the notification topic: {len(messages)}"]
    for number, sent in enumerate(messages, 1):
        attributes = " ".join(f"{name}={value}" for name, value in sent["attributes"].items())
        lines += [f"--- message {number} of {len(messages)}", f"Subject: {sent['subject']}"]
        lines += [f"Attributes: {attributes}", "", sent["body"].rstrip()]
    lines.append(f"--- OpsItems opened: {len(items)}")
    for item in items:
        lines += [
            f"OpsItem {item['ops_item_id']} ({item['status']}, severity {item['severity']}): {item['title']}",
            *(f"  {key}: {_shown(value)}" for key, value in item["operational_data"].items()),
        ]
    return "\n".join(lines)


def _shown(value: Any) -> str:
    """An operational data value on one line (JSON values as they are stored)."""
    text = value if isinstance(value, str) else json.dumps(value)
    return " ".join(text.split())
