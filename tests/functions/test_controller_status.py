"""ControllerStatusFunction on the embedded stack: outcomes, idempotency, the lease, rejection."""

from __future__ import annotations

import copy
import json
from typing import Any

import boto3

from hyperpod_ha import state_table
from tests.conftest import EVENTS, Embedded

TIMESTAMP = "2026-11-29T23:30:42.527Z"  # the sample record's SNS Timestamp


def sns_event(name: str = "sns_controller_on_primary.json") -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EVENTS / name).read_text())
    return loaded


def with_message(event: dict[str, Any], message_id: str, message: str) -> dict[str, Any]:
    changed = copy.deepcopy(event)
    changed["Records"][0]["Sns"].update(MessageId=message_id, Message=message)
    return changed


def only_record(result: dict[str, Any]) -> dict[str, Any]:
    (record,) = result["records"]
    return record


def test_a_notification_starts_a_run(embedded_held: Embedded) -> None:
    record = only_record(embedded_held.stack.invoke("ControllerStatusFunction", sns_event()))
    assert record["outcome"] == "started"
    assert (record["status"], record["address"], record["role"]) == ("ON", "10.1.0.12", "primary")
    (execution,) = embedded_held.executions()
    assert execution["executionArn"] == record["execution_arn"]
    run_input = json.loads(
        boto3.client("stepfunctions").describe_execution(executionArn=record["execution_arn"])["input"]
    )
    assert run_input["cluster"] == "ml-cluster"
    assert run_input["trigger"]["source"] == "sns"
    assert run_input["trigger"]["summary"]["address"] == "10.1.0.12"
    # The SNS Timestamp: the run checks until SlurmctldTimeout + margin after it.
    assert run_input["trigger"]["time"] == TIMESTAMP
    assert run_input["lease_id"]


def test_one_record_delivered_three_times_gives_one_run(embedded_held: Embedded) -> None:
    event = sns_event()
    outcomes = [
        only_record(embedded_held.stack.invoke("ControllerStatusFunction", event))["outcome"]
        for _ in range(3)
    ]
    assert outcomes == ["started", "duplicate", "duplicate"]
    assert len(embedded_held.executions()) == 1


def test_a_burst_for_one_cluster_gives_one_run_and_joins(embedded_held: Embedded) -> None:
    base = sns_event()
    burst = [
        with_message(base, "m-1", "Slurm Controller is OFF (10.1.0.11, Primary Node)"),
        with_message(base, "m-2", "Slurm Controller is ON, (10.1.0.12, Primary Node)"),
        with_message(base, "m-3", "Slurm Controller is OFF (10.1.0.12, Backup Node)"),
    ]
    records = [only_record(embedded_held.stack.invoke("ControllerStatusFunction", event)) for event in burst]
    assert [r["outcome"] for r in records] == ["started", "joined", "joined"]
    assert len({r["execution_arn"] for r in records}) == 1
    assert len(embedded_held.executions()) == 1
    lease = state_table.read_lease(
        boto3.client("dynamodb"), embedded_held.stack.ref("StateTable"), "ml-cluster"
    )
    assert lease is not None
    assert lease.joined == {"sns:m-2", "sns:m-3"}
    assert lease.joined_count == 2


def test_a_joined_record_delivered_again_is_a_duplicate(embedded_held: Embedded) -> None:
    base = sns_event()
    first = with_message(base, "m-1", "Slurm Controller is OFF (10.1.0.11, Primary Node)")
    second = with_message(base, "m-2", "Slurm Controller is ON, (10.1.0.12, Primary Node)")
    outcomes = [
        only_record(embedded_held.stack.invoke("ControllerStatusFunction", e))["outcome"]
        for e in (first, second, second)
    ]
    assert outcomes == ["started", "joined", "duplicate"]


def test_bad_input_is_rejected_kept_and_starts_nothing(embedded_held: Embedded) -> None:
    record = only_record(
        embedded_held.stack.invoke("ControllerStatusFunction", sns_event("sns_malformed.json"))
    )
    assert record["outcome"] == "rejected"
    assert "ON|OFF" in record["reason"]
    assert embedded_held.executions() == []
    sqs = boto3.client("sqs")
    messages = sqs.receive_message(
        QueueUrl=embedded_held.stack.outputs["ControllerStatusDeadLetterQueueUrl"],
        MessageAttributeNames=["All"],
        MaxNumberOfMessages=10,
    )["Messages"]
    (kept,) = messages
    body = json.loads(kept["Body"])
    assert body["id"] == "5f7e2c1a-2b3d-4e5f-8a9b-0c1d2e3f4a53"
    assert body["input"]["Sns"]["Message"] == "Slurm Controller is SIDEWAYS (somewhere)"
    assert kept["MessageAttributes"]["reason"]["StringValue"] == record["reason"]


def test_wrong_subject_is_rejected_not_raised(embedded_held: Embedded) -> None:
    event = sns_event()
    event["Records"][0]["Sns"]["Subject"] = "Hello"
    assert only_record(embedded_held.stack.invoke("ControllerStatusFunction", event))["outcome"] == "rejected"


def test_a_record_of_another_topic_or_of_none_is_rejected_and_starts_nothing(embedded_held: Embedded) -> None:
    # Issue 22: only the stack's SlurmFailoverTopicArn acts (another account's topic, a direct invoke).
    for topic in ("arn:aws:sns:eu-west-1:999999999999:some-other-topic", None):
        event = sns_event()
        if topic is None:
            del event["Records"][0]["Sns"]["TopicArn"]
        else:
            event["Records"][0]["Sns"]["TopicArn"] = topic
        record = only_record(embedded_held.stack.invoke("ControllerStatusFunction", event))
        assert record["outcome"] == "rejected"
        assert record["reason"] == "the record's TopicArn is not the stack's SlurmFailoverTopicArn"
    assert embedded_held.executions() == []
    assert (
        state_table.read_lease(boto3.client("dynamodb"), embedded_held.stack.ref("StateTable"), "ml-cluster")
        is None
    )
    kept = boto3.client("sqs").receive_message(
        QueueUrl=embedded_held.stack.outputs["ControllerStatusDeadLetterQueueUrl"], MaxNumberOfMessages=10
    )["Messages"]
    assert len(kept) == 2


def test_a_message_published_to_the_failover_topic_starts_a_real_execution(embedded_held: Embedded) -> None:
    sns = boto3.client("sns")
    message_id = sns.publish(
        TopicArn=embedded_held.site.failover_topic_arn,
        Subject="Slurm Controller Status Change",
        Message="Slurm Controller is ON, (10.1.0.12, Primary Node)",
    )["MessageId"]
    (execution,) = embedded_held.executions()
    assert execution["status"] == "RUNNING"
    run_input = json.loads(
        boto3.client("stepfunctions").describe_execution(executionArn=execution["executionArn"])["input"]
    )
    assert run_input["trigger"]["id"] == message_id


def test_the_lease_expires(embedded_held: Embedded) -> None:
    ddb = boto3.client("dynamodb")
    table = embedded_held.stack.ref("StateTable")
    base = sns_event()
    embedded_held.stack.invoke(
        "ControllerStatusFunction",
        with_message(base, "m-1", "Slurm Controller is ON, (10.1.0.12, Primary Node)"),
    )
    ddb.update_item(
        TableName=table,
        Key=state_table.key(state_table.lease_key("ml-cluster")),
        UpdateExpression="SET expires_at = :past",
        ExpressionAttributeValues=state_table.attribute_values({":past": 1}),
    )
    record = only_record(
        embedded_held.stack.invoke(
            "ControllerStatusFunction",
            with_message(base, "m-2", "Slurm Controller is OFF (10.1.0.11, Backup Node)"),
        )
    )
    assert record["outcome"] == "started"
    assert len(embedded_held.executions()) == 2


def test_the_off_shape_without_the_comma_starts_a_run(embedded_held: Embedded) -> None:
    record = only_record(
        embedded_held.stack.invoke("ControllerStatusFunction", sns_event("sns_controller_off_backup.json"))
    )
    assert (record["outcome"], record["status"], record["address"], record["role"]) == (
        "started",
        "OFF",
        "10.1.0.11",
        "backup",
    )


def test_a_record_whose_attributes_nest_500_deep_is_rejected_and_kept(embedded_held: Embedded) -> None:
    event = sns_event()
    value: Any = "x"
    for _ in range(500):
        value = {"a": value}
    event["Records"][0]["Sns"]["MessageAttributes"] = {"k": value}
    record = only_record(embedded_held.stack.invoke("ControllerStatusFunction", event))
    assert record["outcome"] == "rejected"
    assert "nests deeper" in record["reason"]
    assert embedded_held.executions() == []
    (kept,) = boto3.client("sqs").receive_message(
        QueueUrl=embedded_held.stack.outputs["ControllerStatusDeadLetterQueueUrl"], MaxNumberOfMessages=10
    )["Messages"]
    body = json.loads(kept["Body"])
    assert body["input_truncated"] is True
    assert body["input"]["Sns"]["Message"] == event["Records"][0]["Sns"]["Message"]
