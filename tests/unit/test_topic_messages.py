"""Messages on the notification topic: SNS-safe subjects, readable bodies, console links."""

from __future__ import annotations

import json
from collections.abc import Iterator

import boto3
import pytest
from hypothesis import given
from hypothesis import strategies as st
from moto import mock_aws

from hyperpod_ha import console_links, topic_messages
from hyperpod_ha.topic_messages import Links, OpenedIncident
from tests.conftest import subscribed_inbox

EXECUTION = "arn:aws:states:us-west-2:123456789012:execution:FailoverVerification:ml-cluster-42"


def _incident(**changes: object) -> OpenedIncident:
    values: dict[str, object] = {
        "cluster": "ml-cluster",
        "verdict": "DOWN",
        "kind": "DOWN",
        "severity": "1",
        "title": "HyperPod cluster ml-cluster: no Slurm controller is active (DOWN)",
        "reasons": ["no controller answered scontrol ping", "heartbeat 300 s old"],
        "error": None,
        "ops_item_id": "oi-0123456789ab",
        "created": True,
        "execution_id": EXECUTION,
        "incident_arn": None,
        "links": Links(
            execution=console_links.execution_console_url(EXECUTION, "us-west-2"),
            ops_item=console_links.ops_item_console_url("oi-0123456789ab", "us-west-2"),
        ),
    }
    values.update(changes)
    return OpenedIncident(**values)  # type: ignore[arg-type]


@given(st.text(max_size=400))
def test_every_subject_is_one_ascii_line_under_100_characters(text: str) -> None:
    subject = topic_messages.subject_line(text)
    assert len(subject) < 100
    assert subject.isascii()
    assert "\n" not in subject
    assert "\r" not in subject


def test_a_short_subject_is_kept_as_is_and_a_long_one_is_marked_cut() -> None:
    assert topic_messages.subject_line("hyperpod-ha ml: DOWN") == "hyperpod-ha ml: DOWN"
    long = topic_messages.subject_line(
        "hyperpod-ha " + "c" * 63 + ": SPLIT_BRAIN - incident still open (sev 1)"
    )
    assert len(long) == 99
    assert long.endswith("...")


def test_execution_link_uses_the_region_and_partition_of_the_arn() -> None:
    assert console_links.execution_console_url(EXECUTION, "eu-west-1") == (
        "https://us-west-2.console.aws.amazon.com/states/home?region=us-west-2"
        f"#/v2/executions/details/{EXECUTION}"
    )
    china = "arn:aws-cn:states:cn-north-1:123456789012:execution:sm:run"
    assert (console_links.execution_console_url(china, "cn-north-1") or "").startswith(
        "https://cn-north-1.console.amazonaws.cn/states/"
    )


@pytest.mark.parametrize(
    "not_an_execution",
    ["local-run-1", "", "arn:aws:states:us-west-2:123456789012:stateMachine:FailoverVerification"],
)
def test_no_execution_link_for_what_is_not_an_execution_arn(not_an_execution: str) -> None:
    assert console_links.execution_console_url(not_an_execution, "us-west-2") is None


def test_ops_item_link() -> None:
    assert console_links.ops_item_console_url("oi-0123456789ab", "us-east-1") == (
        "https://us-east-1.console.aws.amazon.com/systems-manager/opsitems/oi-0123456789ab?region=us-east-1"
    )


def test_opened_message_says_what_is_wrong_and_where_to_look() -> None:
    message = topic_messages.incident_opened(_incident())
    assert message.subject == "hyperpod-ha ml-cluster: DOWN - incident opened (sev 1)"
    body = message.body
    assert "Verdict:   DOWN" in body
    assert "  - no controller answered scontrol ping" in body
    assert "  - heartbeat 300 s old" in body
    assert "oi-0123456789ab (opened by this run)" in body
    assert f"#/v2/executions/details/{EXECUTION}" in body
    assert "/systems-manager/opsitems/oi-0123456789ab?region=us-west-2" in body
    assert message.attributes == {
        "event": "incident-opened",
        "cluster": "ml-cluster",
        "verdict": "DOWN",
        "kind": "DOWN",
        "severity": "1",
    }


def test_message_for_a_problem_still_open_says_so() -> None:
    message = topic_messages.incident_opened(_incident(created=False))
    assert "incident still open" in message.subject
    assert "already open; this run found the problem again" in message.body
    assert message.attributes["event"] == "incident-still-open"


def test_verification_error_names_the_kind_and_the_error() -> None:
    message = topic_messages.incident_opened(
        _incident(kind="verification-error", verdict="", severity="2", error="States.Timeout: task timed out")
    )
    assert message.subject.startswith("hyperpod-ha ml-cluster: verification-error - incident opened")
    assert "States.Timeout: task timed out" in message.body
    assert "verdict" not in message.attributes


def test_incident_manager_record_is_listed_with_the_console() -> None:
    arn = "arn:aws:ssm-incidents::123456789012:incident-record/plan/abc"
    links = Links(execution=None, ops_item=None, incident=console_links.incident_console_url("us-west-2"))
    body = topic_messages.incident_opened(_incident(incident_arn=arn, links=links)).body
    assert arn in body
    assert "https://us-west-2.console.aws.amazon.com/systems-manager/incidents/home?region=us-west-2" in body


def test_huge_reasons_are_cut_to_a_bounded_body() -> None:
    body = topic_messages.incident_opened(_incident(reasons=["x" * 1000] * 200)).body
    assert len(body.encode()) <= topic_messages.BODY_LIMIT
    assert "message shortened by hyperpod-ha" in body


def test_recovered_lists_every_resolved_ops_item_with_its_link() -> None:
    link = console_links.execution_console_url(EXECUTION, "us-west-2")
    message = topic_messages.recovered(
        "ml-cluster", "FAILED_OVER", EXECUTION, {"oi-1": "https://x/oi-1", "oi-2": "https://x/oi-2"}, link
    )
    assert message.subject == "hyperpod-ha ml-cluster: recovered (FAILED_OVER)"
    assert "  - oi-1  https://x/oi-1" in message.body
    assert "  - oi-2  https://x/oi-2" in message.body
    assert message.attributes["event"] == "recovered"


def test_verified_is_short_and_explains_the_verdict() -> None:
    message = topic_messages.verified("ml-cluster", "FAILED_OVER", EXECUTION, None)
    assert message.subject == "hyperpod-ha ml-cluster: verified (FAILED_OVER)"
    assert "a backup controller took over and serves" in message.body
    assert len(message.body.splitlines()) <= 6


@pytest.fixture
def topic_and_queue(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, str]]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-west-2")
    with mock_aws():
        topic = boto3.client("sns").create_topic(Name="hyperpod-ha")["TopicArn"]
        queue = subscribed_inbox(topic)
        yield topic, queue


def test_publish_sends_subject_body_and_attributes(topic_and_queue: tuple[str, str]) -> None:
    topic, queue = topic_and_queue
    message = topic_messages.incident_opened(_incident())
    message_id = topic_messages.publish(boto3.client("sns"), topic, message)
    received = boto3.client("sqs").receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]
    assert len(received) == 1
    envelope = json.loads(received[0]["Body"])
    assert envelope["MessageId"] == message_id
    assert envelope["Subject"] == message.subject
    assert envelope["Message"] == message.body
    assert envelope["MessageAttributes"]["severity"] == {"Type": "String", "Value": "1"}


@pytest.mark.parametrize(
    ("snapshot", "line"),
    [
        (None, None),
        ({}, None),
        (
            {
                "kind": "backup",
                "id": "backup-01234567",
                "status": "AVAILABLE",
                "done": True,
                "succeeded": True,
            },
            "backup backup-01234567 AVAILABLE (ok)",
        ),
        (
            {"kind": "export", "id": "task-0123", "status": "EXECUTING", "done": False, "succeeded": False},
            "export task-0123 EXECUTING (in progress)",
        ),
        (
            {"kind": "failed", "id": None, "status": "FAILED", "done": True, "succeeded": False},
            "failed FAILED (not ok)",
        ),
        (
            {"kind": "unsupported", "id": None, "status": "UNSUPPORTED", "detail": "SCRATCH_2, no S3 link"},
            "none taken (SCRATCH_2, no S3 link)",
        ),
    ],
)
def test_snapshot_summary(snapshot: dict[str, object] | None, line: str | None) -> None:
    assert topic_messages.snapshot_summary(snapshot) == line


def test_messages_name_the_snapshot_when_there_is_one() -> None:
    assert (
        "Snapshot:  backup backup-1 AVAILABLE (ok)"
        in topic_messages.incident_opened(_incident(snapshot="backup backup-1 AVAILABLE (ok)")).body
    )
    assert "Snapshot:  x" in topic_messages.verified("c", "HEALTHY", EXECUTION, None, snapshot="x").body
    assert "Snapshot:  y" in topic_messages.recovered("c", "HEALTHY", EXECUTION, {}, None, snapshot="y").body
    assert "Snapshot:" not in topic_messages.verified("c", "HEALTHY", EXECUTION, None).body
