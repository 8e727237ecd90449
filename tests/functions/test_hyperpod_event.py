"""HyperPodEventFunction on the embedded stack: controllers verified, workers counted, storms tamed."""

from __future__ import annotations

import copy
import json
import time
from typing import Any

import boto3
import pytest

from hyperpod_ha import state_table
from hyperpod_ha.silences import Silences
from tests.conftest import EVENTS, Embedded, subscribed_inbox

CONTROLLER = "i-0a1b2c3d4e5f60001"


def event(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EVENTS / name).read_text())
    return loaded


def worker_event(index: int, event_id: str) -> dict[str, Any]:
    raw = event("eventbridge_node_health_worker.json")
    raw["id"] = event_id
    raw["detail"]["InstanceId"] = f"i-0f0f0f0f0f0f{index:05d}"
    return raw


def outcome(embedded: Embedded, raw: dict[str, Any]) -> dict[str, Any]:
    (record,) = embedded.stack.invoke("HyperPodEventFunction", raw)["records"]
    return record


def notices(embedded: Embedded) -> list[dict[str, Any]]:
    """What reached the notification topic (an SQS queue subscribed to it)."""
    sqs = boto3.client("sqs")
    url = sqs.create_queue(QueueName="notices")["QueueUrl"]
    return [
        json.loads(m["Body"])
        for m in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
    ]


@pytest.fixture
def watching(embedded_held: Embedded) -> Embedded:
    subscribed_inbox(embedded_held.stack.outputs["NotificationTopicArn"], name="notices")
    return embedded_held


def test_an_unhealthy_controller_starts_a_run(watching: Embedded) -> None:
    record = outcome(watching, event("eventbridge_node_health_controller.json"))
    assert record["outcome"] == "started"
    (execution,) = watching.executions()
    run_input = json.loads(
        boto3.client("stepfunctions").describe_execution(executionArn=execution["executionArn"])["input"]
    )
    assert run_input["trigger"] == {
        "source": "eventbridge",
        "id": "7c2d5e8f-1a2b-4c3d-9e8f-000000000001",
        "summary": {"kind": "NodeHealthEvent", "instance_id": CONTROLLER, "health": "Unhealthy"},
        # The event's own time: the run checks until SlurmctldTimeout + margin after it.
        "time": "2026-11-29T23:30:41.000Z",
    }


def test_the_same_event_twice_is_a_duplicate(watching: Embedded) -> None:
    raw = event("eventbridge_node_health_controller.json")
    assert [outcome(watching, raw)["outcome"] for _ in range(2)] == ["started", "duplicate"]


def test_a_healthy_controller_is_ignored(watching: Embedded) -> None:
    raw = event("eventbridge_node_health_controller.json")
    raw["detail"]["HealthSummary"]["HealthStatus"] = "Healthy"
    assert outcome(watching, raw)["outcome"] == "ignored"
    assert watching.executions() == []


def test_an_unknown_health_status_is_accepted(watching: Embedded) -> None:
    raw = event("eventbridge_node_health_controller.json")
    raw["detail"]["HealthSummary"].update(HealthStatus="Impaired", RepairAction="Quarantine")
    assert outcome(watching, raw)["outcome"] == "started"


def test_an_error_on_the_controller_group_starts_a_run(watching: Embedded) -> None:
    assert outcome(watching, event("eventbridge_cluster_event_error.json"))["outcome"] == "started"


def test_an_info_cluster_event_is_ignored(watching: Embedded) -> None:
    raw = event("eventbridge_cluster_event_error.json")
    raw["detail"]["EventDetails"]["EventLevel"] = "Info"
    assert outcome(watching, raw)["outcome"] == "ignored"


def test_a_failed_cluster_is_notified_once(watching: Embedded) -> None:
    raw = event("eventbridge_cluster_state_failed.json")
    assert [outcome(watching, raw)["outcome"] for _ in range(2)] == ["notified", "duplicate"]
    (notice,) = notices(watching)
    assert notice["Subject"] == "[hyperpod-ha] ml-cluster: cluster status Failed (sev 2)"
    # The attributes a subscription filter on severity needs (it had none before).
    assert {name: value["Value"] for name, value in notice["MessageAttributes"].items()} == {
        "cluster": "ml-cluster",
        "kind": "cluster-status",
        "severity": "2",
        "event": "notice",
        "dedup_key": "hyperpod-ha:ml-cluster:cluster-status",
        "level": "error",
    }
    assert "Lifecycle script failed" in notice["Message"]


def test_a_cluster_back_in_service_starts_a_verification(watching: Embedded) -> None:
    raw = event("eventbridge_cluster_state_in_service.json")
    assert [outcome(watching, raw)["outcome"] for _ in range(2)] == ["started", "duplicate"]
    (execution,) = watching.executions()
    run_input = json.loads(
        boto3.client("stepfunctions").describe_execution(executionArn=execution["executionArn"])["input"]
    )
    assert run_input["reason"] == "cluster status InService (an update or a change has ended)"
    assert run_input["trigger"]["summary"] == {"kind": "ClusterStateChange", "status": "InService"}
    assert run_input["lease_seconds"] == 3600  # a run waiting for maintenance keeps its lease this long
    assert notices(watching) == []


def test_a_cluster_being_updated_starts_nothing(watching: Embedded) -> None:
    # The update's own run comes from its ON/OFF messages; the status alone is no failure.
    record = outcome(watching, event("eventbridge_cluster_state_system_updating.json"))
    assert (record["outcome"], record["reason"]) == ("ignored", "cluster status SystemUpdating")
    assert watching.executions() == []
    assert notices(watching) == []


def test_another_clusters_event_is_ignored(watching: Embedded) -> None:
    raw = event("eventbridge_node_health_controller.json")
    raw["detail"]["ClusterName"] = "other-cluster"
    assert outcome(watching, raw)["outcome"] == "ignored"
    assert watching.executions() == []


def test_malformed_events_are_rejected_and_kept(watching: Embedded) -> None:
    record = outcome(watching, event("eventbridge_malformed.json"))
    assert record["outcome"] == "rejected"
    kept = boto3.client("sqs").receive_message(
        QueueUrl=watching.stack.outputs["HyperPodEventDeadLetterQueueUrl"]
    )["Messages"]
    assert json.loads(kept[0]["Body"])["id"] == "7c2d5e8f-1a2b-4c3d-9e8f-000000000005"
    assert watching.executions() == []


@pytest.mark.parametrize("garbage", [{}, {"source": "aws.sagemaker"}, {"detail": "x", "source": 5}])
def test_garbage_never_raises(watching: Embedded, garbage: dict[str, Any]) -> None:
    assert outcome(watching, garbage)["outcome"] == "rejected"


def test_unhealthy_workers_are_counted_then_notified_once(watching: Embedded) -> None:
    # Threshold 5 (template default): the 6th distinct worker crosses it.
    outcomes = [outcome(watching, worker_event(i, f"w-{i}"))["outcome"] for i in range(1, 9)]
    assert outcomes == ["counted"] * 5 + ["notified", "counted", "counted"]
    (notice,) = notices(watching)
    assert notice["Subject"] == "[hyperpod-ha] ml-cluster: 6 worker nodes unhealthy within 10 min (sev 2)"
    assert notice["MessageAttributes"]["severity"]["Value"] == "2"
    assert "epoch" not in notice["Message"]
    assert " UTC)" in notice["Message"]
    assert watching.executions() == []


def test_repeated_events_of_one_worker_count_once(watching: Embedded) -> None:
    for attempt in range(10):
        outcome(watching, worker_event(1, f"again-{attempt}"))
    item = boto3.client("dynamodb").scan(TableName=watching.stack.ref("StateTable"))["Items"]
    (window,) = [i for i in item if i["pk"]["S"].startswith(state_table.workers_prefix("ml-cluster"))]
    assert window["unhealthy"]["N"] == "1"


@pytest.mark.slow
def test_a_storm_gives_one_run_and_one_notice(watching: Embedded) -> None:
    """10,000 node events for one cluster within a minute: one run and one notice."""
    # Workers are counted in 10-minute windows aligned to the clock: a storm that straddles a
    # boundary rightly notifies once per window. The windows the worker events were sent in
    # are read around each: the function's own clock read falls between.
    window = 600
    controller = event("eventbridge_node_health_controller.json")
    outcomes: dict[str, int] = {}
    sent_in: set[float] = set()
    ended_in: set[float] = set()
    for index in range(10_000):
        if index % 100 == 0:
            raw = copy.deepcopy(controller)
            raw["id"] = f"controller-{index}"
        else:
            raw = worker_event(index % 16 + 1, f"worker-{index}")
            sent_in.add(time.time() // window)
        result = outcome(watching, raw)["outcome"]
        if index % 100:
            ended_in.add(time.time() // window)
        outcomes[result] = outcomes.get(result, 0) + 1
    assert outcomes["started"] == 1
    assert outcomes["joined"] == 99
    # One notice per window (the last event is a worker's, so every window reached has one).
    assert len(sent_in) <= outcomes["notified"] <= len(sent_in | ended_in)
    assert len(watching.executions()) == 1
    assert len(notices(watching)) == outcomes["notified"]


def test_in_a_silence_a_failed_cluster_is_not_notified(watching: Embedded) -> None:
    silences = Silences(boto3.client("dynamodb"), watching.stack.ref("StateTable"))
    silences.start("ml-cluster", 3600, "cluster update", "arn:aws:iam::123456789012:user/bob")
    record = outcome(watching, event("eventbridge_cluster_state_failed.json"))
    assert (record["outcome"], record["silenced"]["reason"]) == ("silenced", "cluster update")
    assert notices(watching) == []
