"""Issue 22, items 5 and 6, per trigger on the embedded stack: every id and free-text field from
outside at ten times its bound gives a typed reject (ids) or a bounded excerpt (free text), and
nothing is started or written oversize; input from outside this stack acts on nothing."""

from __future__ import annotations

import copy
import json
from typing import Any

import boto3
import pytest

from hyperpod_ha import state_table
from hyperpod_ha.lease import Lease
from hyperpod_ha.request_fields import CUT_MARK, MAX_ID_CHARS, MAX_TEXT_CHARS
from hyperpod_ha.runs.settings import RunSettings
from hyperpod_ha.runs.verification_runs import RunRequestRejected, VerificationRuns
from hyperpod_ha.trigger import Trigger
from hyperpod_ha_dev.embedded.functions import FunctionError
from hyperpod_ha_dev.embedded.held_executions import end_execution, held_execution
from tests.conftest import EVENTS, Embedded, subscribed_inbox

LONG_ID = "i" * (10 * MAX_ID_CHARS)
LONG_TEXT = "t" * (10 * MAX_TEXT_CHARS)
# What Step Functions (256 KiB input), DynamoDB (400 KB item) and SNS (256 KB) take, with room.
SERVICE_LIMIT = 200 * 1024


def sample(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EVENTS / name).read_text())
    return loaded


def run_inputs(embedded: Embedded) -> list[dict[str, Any]]:
    sfn = boto3.client("stepfunctions")
    return [
        json.loads(sfn.describe_execution(executionArn=e["executionArn"])["input"])
        for e in embedded.executions()
    ]


def lease(embedded: Embedded) -> Lease | None:
    return state_table.read_lease(boto3.client("dynamodb"), embedded.stack.ref("StateTable"), "ml-cluster")


def items_are_bounded(embedded: Embedded) -> None:
    """Every state-table item and run input stays far under its service's limit."""
    scanned = boto3.client("dynamodb").scan(TableName=embedded.stack.ref("StateTable"))["Items"]
    assert all(len(json.dumps(item)) < SERVICE_LIMIT for item in scanned)
    assert all(len(json.dumps(run)) < SERVICE_LIMIT for run in run_inputs(embedded))


def only_record(result: dict[str, Any]) -> dict[str, Any]:
    (record,) = result["records"]
    return record


# --- the SNS record ------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["MessageId", "Timestamp", "Subject", "Message"])
def test_an_sns_field_at_ten_times_its_bound_is_rejected_and_starts_nothing(
    embedded_held: Embedded, field: str
) -> None:
    event = sample("sns_controller_on_primary.json")
    event["Records"][0]["Sns"][field] = LONG_ID if field != "Message" else LONG_TEXT
    if field == "Timestamp":
        # A time is never a reason to reject: an unreadable one is the run's start.
        record = only_record(embedded_held.stack.invoke("ControllerStatusFunction", event))
        assert record["outcome"] == "started"
        (run,) = run_inputs(embedded_held)
        assert run["trigger"]["time"] == ""
        assert len(run["trigger"]["summary"]["timestamp"]) == MAX_TEXT_CHARS
    else:
        record = only_record(embedded_held.stack.invoke("ControllerStatusFunction", event))
        assert record["outcome"] == "rejected"
        assert len(record["message_id"]) <= MAX_ID_CHARS
        assert embedded_held.executions() == []
        assert lease(embedded_held) is None
    items_are_bounded(embedded_held)


# --- the EventBridge events ----------------------------------------------------------------


def test_an_event_of_another_account_or_region_is_rejected_and_acts_on_nothing(
    embedded_held: Embedded,
) -> None:
    for key, value in (("account", "210987654321"), ("region", "eu-west-1"), ("account", None)):
        event = sample("eventbridge_node_health_controller.json")
        if value is None:
            del event[key]
        else:
            event[key] = value
        record = only_record(embedded_held.stack.invoke("HyperPodEventFunction", event))
        assert record["outcome"] == "rejected"
        assert record["reason"] == f"{key} is not this stack's {key}"
    assert embedded_held.executions() == []
    assert lease(embedded_held) is None


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("eventbridge_node_health_controller.json", ("detail", "InstanceId")),
        ("eventbridge_node_health_controller.json", ("detail", "HealthSummary", "HealthStatus")),
        ("eventbridge_node_health_controller.json", ("detail", "HealthSummary", "RepairAction")),
        ("eventbridge_node_health_controller.json", ("detail", "ClusterName")),
        ("eventbridge_cluster_state_failed.json", ("detail", "ClusterStatus")),
        ("eventbridge_cluster_event_error.json", ("detail", "EventDetails", "EventId")),
        ("eventbridge_cluster_event_error.json", ("detail", "EventDetails", "InstanceId")),
        ("eventbridge_cluster_event_error.json", ("detail", "EventDetails", "EventLevel")),
        ("eventbridge_cluster_event_error.json", ("detail", "EventDetails", "InstanceGroupName")),
        ("eventbridge_cluster_event_error.json", ("id",)),
    ],
)
def test_an_event_id_at_ten_times_its_bound_is_rejected_and_starts_nothing(
    embedded_held: Embedded, name: str, path: tuple[str, ...]
) -> None:
    event = sample(name)
    place = event
    for key in path[:-1]:
        place = place[key]
    place[path[-1]] = LONG_ID
    record = only_record(embedded_held.stack.invoke("HyperPodEventFunction", event))
    assert record["outcome"] == "rejected"
    assert f"longer than {MAX_ID_CHARS} characters" in record["reason"]
    assert embedded_held.executions() == []
    assert lease(embedded_held) is None
    kept = boto3.client("sqs").receive_message(
        QueueUrl=embedded_held.stack.outputs["HyperPodEventDeadLetterQueueUrl"], MaxNumberOfMessages=10
    )["Messages"]
    assert len(kept) == 1
    assert len(kept[0]["Body"].encode()) <= 256 * 1024


@pytest.mark.parametrize(
    ("name", "path", "summary_key"),
    [
        ("eventbridge_node_health_controller.json", ("detail", "HealthSummary", "HealthStatusReason"), None),
        ("eventbridge_cluster_event_error.json", ("detail", "EventDetails", "Description"), "description"),
    ],
)
def test_free_text_at_ten_times_its_bound_starts_a_run_with_an_excerpt(
    embedded_held: Embedded, name: str, path: tuple[str, ...], summary_key: str | None
) -> None:
    event = sample(name)
    place = event
    for key in path[:-1]:
        place = place[key]
    place[path[-1]] = LONG_TEXT
    record = only_record(embedded_held.stack.invoke("HyperPodEventFunction", event))
    assert record["outcome"] == "started"
    (run,) = run_inputs(embedded_held)
    assert len(run["reason"]) == MAX_TEXT_CHARS
    assert run["reason"].endswith(CUT_MARK)
    if summary_key:
        assert len(run["trigger"]["summary"][summary_key]) <= MAX_TEXT_CHARS
    items_are_bounded(embedded_held)


def test_a_cluster_failed_message_at_ten_times_its_bound_is_published_as_an_excerpt(
    embedded_held: Embedded,
) -> None:
    inbox = subscribed_inbox(embedded_held.stack.outputs["NotificationTopicArn"], name="bounds-inbox")
    event = sample("eventbridge_cluster_state_failed.json")
    event["detail"]["FailureMessage"] = "f" * (10 * 256 * 1024)  # ten times SNS's whole limit
    record = only_record(embedded_held.stack.invoke("HyperPodEventFunction", event))
    assert record["outcome"] == "notified"
    (message,) = boto3.client("sqs").receive_message(QueueUrl=inbox, MaxNumberOfMessages=10)["Messages"]
    body = json.loads(message["Body"])["Message"]
    assert CUT_MARK in body
    assert len(body.encode()) < 2 * MAX_TEXT_CHARS


# --- the watchdog tick, the abandoned-run event, the operator ------------------------------


@pytest.mark.parametrize("field", ["tick_id", "scheduled_time"])
def test_a_tick_field_at_ten_times_its_bound_is_rejected(embedded_held: Embedded, field: str) -> None:
    tick = sample("scheduler_watchdog_tick.json")
    tick[field] = LONG_ID
    with pytest.raises(FunctionError) as raised:
        embedded_held.stack.invoke("WatchdogFunction", tick)
    assert raised.value.error_type == "TickRejected"
    assert embedded_held.executions() == []


def abandoned(embedded: Embedded, **detail: Any) -> dict[str, Any]:
    event = sample("eventbridge_execution_aborted.json")
    event["detail"]["stateMachineArn"] = embedded.state_machine_arn
    event["detail"]["executionArn"] = (
        embedded.state_machine_arn.replace(":stateMachine:", ":execution:") + ":x"
    )
    event["detail"].update(detail)
    return event


def held_run(embedded: Embedded) -> dict[str, Any]:
    embedded.stack.invoke("ControllerStatusFunction", sample("sns_controller_on_primary.json"))
    (run,) = run_inputs(embedded)
    return run


def ops_items() -> list[Any]:
    found = boto3.client("ssm").describe_ops_items(
        OpsItemFilters=[{"Key": "Source", "Values": ["hyperpod-ha"], "Operator": "Equal"}]
    )["OpsItemSummaries"]
    return list(found)


@pytest.mark.parametrize(
    "forged",
    [
        {"stateMachineArn": "arn:aws:states:us-east-1:210987654321:stateMachine:other"},
        {"executionArn": "arn:aws:states:us-east-1:210987654321:execution:other:x"},
        {"executionArn": "arn:aws:states:us-east-1:123456789012:execution:x:" + LONG_ID},
    ],
)
def test_an_abandoned_run_of_another_state_machine_releases_nothing_and_opens_nothing(
    embedded_held: Embedded, forged: dict[str, Any]
) -> None:
    run = held_run(embedded_held)
    event = abandoned(embedded_held, input=json.dumps(run), **forged)
    result = embedded_held.stack.invoke("AbandonedRunFunction", event)
    assert result["outcome"] == "ignored"
    assert lease(embedded_held) is not None  # the live run keeps its lease
    assert ops_items() == []


def test_an_abandoned_run_with_a_reason_at_ten_times_its_bound_opens_a_bounded_incident(
    embedded_held: Embedded,
) -> None:
    run = held_run(embedded_held)
    # The function reads the run's input from Step Functions (issue 35): an execution of the
    # stack's state machine, ended, whose input carries the long reason.
    ended = held_execution(embedded_held.state_machine_arn, "long-reason", {**run, "reason": LONG_TEXT})
    end_execution(ended, "ABORTED")
    event = abandoned(embedded_held, executionArn=ended, status="ABORTED")
    result = embedded_held.stack.invoke("AbandonedRunFunction", event)
    assert result["outcome"] == "handled"
    (item,) = ops_items()
    described = boto3.client("ssm").get_ops_item(OpsItemId=item["OpsItemId"])["OpsItem"]
    assert len(json.dumps(described, default=str)) < SERVICE_LIMIT


def operator_runs(embedded: Embedded) -> VerificationRuns:
    return VerificationRuns(
        boto3.client("dynamodb"),
        boto3.client("stepfunctions"),
        embedded.stack.ref("StateTable"),
        embedded.state_machine_arn,
        RunSettings(settle_seconds=600),
    )


def test_operator_input_at_ten_times_its_bounds(embedded_held: Embedded) -> None:
    runs = operator_runs(embedded_held)
    with pytest.raises(RunRequestRejected, match=f"longer than {MAX_ID_CHARS}"):
        runs.start_or_join("ml-cluster", Trigger("operator", LONG_ID, {}), "by hand")
    with pytest.raises(RunRequestRejected, match="more than 16 fields"):
        runs.start_or_join("ml-cluster", Trigger("operator", "", {str(i): i for i in range(160)}), "r")
    assert embedded_held.executions() == []
    assert lease(embedded_held) is None
    decision = runs.start_or_join(
        "ml-cluster", Trigger("operator", "", {"reason": LONG_TEXT, "note": "é" * 20_000}), LONG_TEXT
    )
    assert decision.outcome == "started"
    (run,) = run_inputs(embedded_held)
    assert len(run["reason"]) == MAX_TEXT_CHARS
    assert len(run["trigger"]["summary"]["reason"]) == MAX_TEXT_CHARS
    items_are_bounded(embedded_held)


# --- the snapshot and incident requests ----------------------------------------------------


def test_snapshot_and_incident_requests_for_another_cluster_are_refused(embedded: Embedded) -> None:
    for function, event in (
        ("SnapshotStateFunction", {"action": "start", "cluster": "other-cluster", "execution_id": "e-1"}),
        (
            "IncidentFunction",
            {"action": "open", "cluster": "other-cluster", "verdict": "DOWN", "execution_id": "e"},
        ),
        (
            "IncidentFunction",
            {"action": "resolve", "cluster": "other-cluster", "verdict": "HEALTHY", "execution_id": "e"},
        ),
    ):
        with pytest.raises(FunctionError) as raised:
            embedded.stack.invoke(function, event)
        assert "this stack watches cluster ml-cluster, not other-cluster" in raised.value.error_message
        assert raised.value.error_type in ("InvalidSnapshotRequest", "InvalidIncidentRequest")
    assert ops_items() == []
    assert boto3.client("fsx").describe_backups()["Backups"] == []


def test_snapshot_and_incident_fields_at_ten_times_their_bounds(embedded: Embedded) -> None:
    for function, event in (
        ("SnapshotStateFunction", {"action": "start", "cluster": "ml-cluster", "execution_id": LONG_ID}),
        (
            "IncidentFunction",
            {"action": "open", "cluster": "ml-cluster", "verdict": "DOWN", "execution_id": LONG_ID},
        ),
    ):
        with pytest.raises(FunctionError, match=f"execution_id is longer than {MAX_ID_CHARS}"):
            embedded.stack.invoke(function, event)
    opened = embedded.stack.invoke(
        "IncidentFunction",
        {
            "action": "open",
            "cluster": "ml-cluster",
            "verdict": "DOWN",
            "execution_id": "e-1",
            "reasons": [LONG_TEXT] * 100,
        },
    )
    assert opened["created"]
    items_are_bounded(embedded)
    verdict = state_table.key(state_table.status_key("ml-cluster", "verdict"))
    stored = boto3.client("dynamodb").get_item(TableName=embedded.stack.ref("StateTable"), Key=verdict)[
        "Item"
    ]
    assert len(json.dumps(stored)) < SERVICE_LIMIT
    snapshot = embedded.stack.invoke(
        "SnapshotStateFunction",
        {"action": "start", "cluster": "ml-cluster", "execution_id": "e-2", "reason": copy.copy(LONG_TEXT)},
    )
    assert snapshot["kind"] in ("backup", "export", "unsupported")
    items_are_bounded(embedded)


# --- the lease item read back --------------------------------------------------------------


def test_a_lease_item_this_code_did_not_write_starts_nothing_and_is_left_alone(
    embedded_held: Embedded,
) -> None:
    ddb = boto3.client("dynamodb")
    table = embedded_held.stack.ref("StateTable")
    foreign = {
        **state_table.key(state_table.lease_key("ml-cluster")),
        "lease_id": {"S": "someone-else"},
        "kind": {"S": "maintenance"},
        "expires_at": {"N": "9999999999"},
    }
    ddb.put_item(TableName=table, Item=foreign)
    with pytest.raises(FunctionError) as raised:
        embedded_held.stack.invoke("ControllerStatusFunction", sample("sns_controller_on_primary.json"))
    assert raised.value.error_type == "LeaseItemRejected"
    assert "kind is not a run, a drill, a restore or a roll-out" in raised.value.error_message
    assert embedded_held.executions() == []
    assert (
        ddb.get_item(TableName=table, Key=state_table.key(state_table.lease_key("ml-cluster")))["Item"]
        == foreign
    )
