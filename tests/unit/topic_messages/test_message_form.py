"""The one form of every message: SNS-safe subjects that keep their severity, the attributes on
every message, bodies cut only at the end of a list, publishing through the redaction path."""

from __future__ import annotations

import json
from collections.abc import Iterator

import boto3
import pytest
from hypothesis import given
from hypothesis import strategies as st
from moto import mock_aws

from hyperpod_ha import console_links, topic_messages
from hyperpod_ha.topic_messages import Cuttable, NotInTheOneForm, TopicMessage, message
from tests.conftest import subscribed_inbox

EXECUTION = "arn:aws:states:us-west-2:123456789012:execution:FailoverVerification:ml-cluster-42"


def _message(**changes: object) -> TopicMessage:
    values: dict[str, object] = {
        "cluster": "ml-cluster",
        "kind": "DOWN",
        "event": "opened",
        "what": "DOWN: no Slurm controller is active",
        "body": ["first line", "", "second"],
        "verdict": "DOWN",
    }
    values.update(changes)
    return message(**values)  # type: ignore[arg-type]


@given(st.text(max_size=400))
def test_every_subject_line_is_one_ascii_line_under_100_characters(text: str) -> None:
    subject = topic_messages.subject_line(text)
    assert len(subject) < 100
    assert subject.isascii()
    assert "\n" not in subject
    assert "\r" not in subject


@given(st.text(max_size=400), st.sampled_from(["1", "2", "3", "4"]))
def test_a_subject_keeps_its_form_and_severity_whatever_happened(what: str, severity: str) -> None:
    subject = topic_messages.subject("c" * 63, what, severity)
    assert len(subject) < 100
    assert subject.isascii()
    assert subject.startswith("[hyperpod-ha] " + "c" * 63 + ": ")
    assert subject.endswith(f" (sev {severity})")


def test_the_subject_form() -> None:
    assert _message().subject == "[hyperpod-ha] ml-cluster: DOWN: no Slurm controller is active (sev 1)"
    long = _message(what="x" * 200).subject
    assert len(long) == 99
    assert long.endswith("... (sev 1)")


def test_every_message_has_the_attributes_and_the_kinds_severity() -> None:
    assert _message().attributes == {
        "cluster": "ml-cluster",
        "kind": "DOWN",
        "severity": "1",
        "event": "opened",
        "dedup_key": "hyperpod-ha:ml-cluster:DOWN",
        "level": "critical",
        "verdict": "DOWN",
    }
    notice = _message(kind="workers-unhealthy", event="notice", verdict="")
    assert notice.attributes == {
        "cluster": "ml-cluster",
        "kind": "workers-unhealthy",
        "severity": "2",
        "event": "notice",
        "dedup_key": "hyperpod-ha:ml-cluster:workers-unhealthy",
        "level": "error",
    }
    assert _message(kind="drill", severity="3").subject.endswith("(sev 3)")


@pytest.mark.parametrize(
    ("broken", "why"),
    [
        (TopicMessage("HyperPod ml is Failed", "b", {}), "attributes"),
        (
            TopicMessage(
                "HyperPod ml is Failed",
                "b",
                {
                    "cluster": "ml",
                    "kind": "k",
                    "severity": "2",
                    "event": "notice",
                    "dedup_key": "hyperpod-ha:ml:k",
                    "level": "error",
                },
            ),
            "subject",
        ),
        (
            TopicMessage(
                "[hyperpod-ha] ml: x (sev 2)",
                "b",
                {
                    "cluster": "ml",
                    "kind": "k",
                    "severity": "9",
                    "event": "notice",
                    "dedup_key": "hyperpod-ha:ml:k",
                    "level": "critical",
                },
            ),
            "severity is not",
        ),
        (
            TopicMessage(
                "[hyperpod-ha] ml: x (sev 2)",
                "b",
                {
                    "cluster": "ml",
                    "kind": "k",
                    "severity": "3",
                    "event": "notice",
                    "dedup_key": "hyperpod-ha:ml:k",
                    "level": "warning",
                },
            ),
            "subject's severity",
        ),
        (
            TopicMessage(
                "[hyperpod-ha] ml: x (sev 2)",
                "b",
                {
                    "cluster": "ml",
                    "kind": "k",
                    "severity": "2",
                    "event": "other",
                    "dedup_key": "hyperpod-ha:ml:k",
                    "level": "error",
                },
            ),
            "event",
        ),
        (
            TopicMessage(
                "[hyperpod-ha] ml: x (sev 2)",
                "b",
                {
                    "cluster": "ml",
                    "kind": "k",
                    "severity": "2",
                    "event": "opened",
                    "dedup_key": "hyperpod-ha:ml:k",
                    # A paging service would page at another severity than the message says.
                    "level": "critical",
                },
            ),
            "level",
        ),
    ],
)
def test_a_message_not_in_the_form_is_refused(broken: TopicMessage, why: str) -> None:
    with pytest.raises(NotInTheOneForm, match=why):
        topic_messages.check_form(broken)


def test_a_long_list_is_cut_at_its_end_with_how_many_were_left_off() -> None:
    reasons = Cuttable(tuple(f"  - reason {i} " + "x" * 100 for i in range(100)), "  … {count} more")
    body = topic_messages.bounded_body(["head", reasons, "tail: next steps"], limit=2000)
    lines = body.splitlines()
    assert len(body.encode()) <= 2000
    assert lines[0] == "head"
    assert lines[-1] == "tail: next steps"
    kept = [line for line in lines if line.startswith("  - reason")]
    assert kept == [f"  - reason {i} " + "x" * 100 for i in range(len(kept))]
    assert lines[-2] == f"  … {100 - len(kept)} more"
    assert 10 <= len(kept) < 100


def test_a_body_that_fits_is_kept_whole() -> None:
    reasons = Cuttable(("  - a", "  - b"))
    assert topic_messages.bounded_body(["head", reasons, "tail"]) == "head\n  - a\n  - b\ntail\n"


def test_the_body_stays_within_snss_limit_however_many_reasons() -> None:
    reasons = Cuttable(tuple("x" * 2048 for _ in range(400)))
    body = topic_messages.bounded_body(["head", reasons, "tail"])
    assert len(body.encode()) <= topic_messages.BODY_LIMIT <= 256 * 1024 - 2048
    assert body.rstrip().endswith("tail")
    assert "more" in body.splitlines()[-2]


def test_lines_that_cannot_be_cut_are_cut_in_bytes_as_a_last_resort() -> None:
    body = topic_messages.bounded_body(["y" * 5000], limit=1000)
    assert len(body.encode()) <= 1000
    assert "message shortened by hyperpod-ha" in body


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


def test_console_links_of_what_messages_point_at() -> None:
    assert console_links.ops_item_console_url("oi-0123456789ab", "us-east-1") == (
        "https://us-east-1.console.aws.amazon.com/systems-manager/opsitems/oi-0123456789ab?region=us-east-1"
    )
    assert console_links.alarm_console_url("stack.WatchdogErrorsAlarm", "us-east-1") == (
        "https://us-east-1.console.aws.amazon.com/cloudwatch/home?region=us-east-1"
        "#alarmsV2:alarm/stack.WatchdogErrorsAlarm"
    )
    secret = "arn:aws:secretsmanager:us-east-1:123456789012:secret:ml/slurmdbd-HGZcWv"
    assert console_links.secret_console_url(secret, "us-east-1") == (
        "https://us-east-1.console.aws.amazon.com/secretsmanager/secret?name=ml%2Fslurmdbd&region=us-east-1"
    )
    assert console_links.cluster_console_url("ml", "us-east-1").endswith("#/cluster-management/ml")


@pytest.fixture
def topic_and_queue(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, str]]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-west-2")
    with mock_aws():
        topic = boto3.client("sns").create_topic(Name="hyperpod-ha")["TopicArn"]
        queue = subscribed_inbox(topic)
        yield topic, queue


def _received(queue: str) -> list[dict[str, object]]:
    received = boto3.client("sqs").receive_message(QueueUrl=queue, MaxNumberOfMessages=10).get("Messages", [])
    return [json.loads(item["Body"]) for item in received]


def test_publish_sends_subject_body_and_attributes(topic_and_queue: tuple[str, str]) -> None:
    topic, queue = topic_and_queue
    sent = _message()
    message_id = topic_messages.publish(boto3.client("sns"), topic, sent)
    (envelope,) = _received(queue)
    assert envelope["MessageId"] == message_id
    assert envelope["Subject"] == sent.subject
    assert envelope["Message"] == sent.body
    assert envelope["MessageAttributes"] == {
        name: {"Type": "String", "Value": value} for name, value in sent.attributes.items()
    }


def test_publish_redacts_subject_body_and_attributes(topic_and_queue: tuple[str, str]) -> None:
    topic, queue = topic_and_queue
    leaky = _message(what="password=hunter2 leaked", body=["StoragePass=hunter2"])
    leaky = TopicMessage(leaky.subject, leaky.body, {**leaky.attributes, "verdict": "token=hunter2"})
    topic_messages.publish(boto3.client("sns"), topic, leaky)
    (envelope,) = _received(queue)
    assert "hunter2" not in json.dumps(envelope)
    assert str(envelope["Subject"]).endswith("(sev 1)")


def test_publish_refuses_a_message_not_in_the_form(topic_and_queue: tuple[str, str]) -> None:
    topic, queue = topic_and_queue
    with pytest.raises(NotInTheOneForm):
        topic_messages.publish(boto3.client("sns"), topic, TopicMessage("HyperPod ml is Failed", "body"))
    assert _received(queue) == []


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
