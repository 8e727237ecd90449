"""The subscription filter policies docs/messages.md, docs/operations.md and the README show,
checked against the messages really sent: every sample published through
``topic_messages.publish`` to a topic with one queue per policy (moto applies SNS filter
policies), and the notice path's own alarm as CloudWatch sends it (raw JSON, no attributes)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from hyperpod_ha import topic_messages
from hyperpod_ha_stack.message_samples import FILTER_POLICIES, SAMPLES
from tests.conftest import ROOT, subscribed_inbox

RAW_ALARM = json.dumps({"AlarmName": "hyperpod-ha.NoticeErrorsAlarm", "NewStateValue": "ALARM"})


@pytest.fixture
def inboxes() -> Iterator[dict[str, str]]:
    with mock_aws():
        sns = boto3.client("sns", region_name="us-east-1")
        topic = sns.create_topic(Name="hyperpod-ha")["TopicArn"]
        queues = {"email": subscribed_inbox(topic, "email")}
        for name, policy in FILTER_POLICIES.items():
            queues[name] = subscribed_inbox(topic, name)
            (subscription,) = [
                s
                for s in sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"]
                if s["Endpoint"].endswith(name)
            ]
            sns.set_subscription_attributes(
                SubscriptionArn=subscription["SubscriptionArn"],
                AttributeName="FilterPolicy",
                AttributeValue=json.dumps(policy),
            )
        for sample in SAMPLES:
            topic_messages.publish(sns, topic, sample.make())
        sns.publish(TopicArn=topic, Subject="ALARM: hyperpod-ha.NoticeErrorsAlarm", Message=RAW_ALARM)
        yield queues


def received(queue: str) -> list[str]:
    """The subjects that reached ``queue``."""
    sqs = boto3.client("sqs", region_name="us-east-1")
    subjects = []
    while batch := sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10).get("Messages", []):
        subjects += [json.loads(message["Body"])["Subject"] for message in batch]
        sqs.delete_message_batch(
            QueueUrl=queue,
            Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(batch)],
        )
    return sorted(subjects)


def _severity(subject: str) -> str | None:
    match = re.search(r"\(sev (\d)\)$", subject)
    return match[1] if match else None


def test_email_gets_everything(inboxes: dict[str, str]) -> None:
    assert len(received(inboxes["email"])) == len(SAMPLES) + 1


def test_paging_gets_severity_one_and_two_and_the_notice_paths_own_alarm(inboxes: dict[str, str]) -> None:
    paged = received(inboxes["paging"])
    expected = sorted(
        [s.make().subject for s in SAMPLES if s.make().attributes["severity"] in ("1", "2")]
        + ["ALARM: hyperpod-ha.NoticeErrorsAlarm"]
    )
    assert paged == expected
    # Openings, their reminders and their resolutions page alike; DEGRADED (3) and notices (4) do not.
    assert {_severity(subject) for subject in paged} == {"1", "2", None}
    assert any("recovered" in subject for subject in paged)
    assert not any("DEGRADED" in subject or "verified HEALTHY" in subject for subject in paged)


def test_the_chat_policy_leaves_out_only_the_reminders(inboxes: dict[str, str]) -> None:
    chat = received(inboxes["chat"])
    reminders = [s.make().subject for s in SAMPLES if s.make().attributes["event"] == "reminder"]
    assert reminders
    assert not set(reminders) & set(chat)
    assert len(chat) == len(SAMPLES) + 1 - len(reminders)


def test_the_readme_and_operations_show_the_paging_policy_that_is_checked_here() -> None:
    for page in (ROOT / "README.md", ROOT / "docs" / "operations.md"):
        assert json.dumps(FILTER_POLICIES["paging"]) in page.read_text(), page.name
