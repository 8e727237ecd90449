"""HyperPodEventFunction on the embedded stack: a cluster event's metadata (slurmdbd health, the
external accounting database) at any EventLevel; null metadata read again."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest

from tests.conftest import Embedded, subscribed_inbox
from tests.functions.test_hyperpod_event import event, notices, outcome

pytestmark = pytest.mark.usefixtures("watching")


@pytest.fixture
def watching(embedded_held: Embedded) -> Embedded:
    subscribed_inbox(embedded_held.stack.outputs["NotificationTopicArn"], name="notices")
    return embedded_held


def run_input(embedded: Embedded) -> dict[str, Any]:
    (execution,) = embedded.executions()
    described = boto3.client("stepfunctions").describe_execution(executionArn=execution["executionArn"])
    loaded: dict[str, Any] = json.loads(described["input"])
    return loaded


def ops_items() -> list[dict[str, Any]]:
    ssm = boto3.client("ssm")
    found = ssm.describe_ops_items(
        OpsItemFilters=[{"Key": "Source", "Values": ["hyperpod-ha"], "Operator": "Equal"}]
    )["OpsItemSummaries"]
    return [ssm.get_ops_item(OpsItemId=item["OpsItemId"])["OpsItem"] for item in found]


def test_an_unhealthy_slurmdbd_warn_starts_a_run_with_hyperpods_reason(watching: Embedded) -> None:
    record = outcome(watching, event("eventbridge_slurmdbd_unhealthy_warn.json"))
    assert record["outcome"] == "started"
    trigger = run_input(watching)["trigger"]
    assert trigger["id"] == "5b0e1a52-6f3c-4d8e-9a71-2c4b8d0e6f11"
    summary = trigger["summary"]
    assert (summary["slurm_health_component"], summary["slurm_health_status"]) == ("Slurmdbd", "Unhealthy")
    assert summary["slurm_health_reason"] == "DbUnreachable"
    assert trigger["summary"]["reported"] == "HyperPod reported slurmdbd Unhealthy (DbUnreachable)"


def test_a_later_healthy_slurmdbd_info_asks_for_a_verification(watching: Embedded) -> None:
    unhealthy = outcome(watching, event("eventbridge_slurmdbd_unhealthy_warn.json"))
    healthy = outcome(watching, event("eventbridge_slurmdbd_healthy_info.json"))
    # The first run still holds the lease (held runs): the healthy event joins it.
    assert (unhealthy["outcome"], healthy["outcome"]) == ("started", "joined")


def test_a_healthy_slurmdbd_alone_starts_a_run(watching: Embedded) -> None:
    assert outcome(watching, event("eventbridge_slurmdbd_healthy_info.json"))["outcome"] == "started"
    assert run_input(watching)["trigger"]["summary"]["reported"] == "HyperPod reported slurmdbd Healthy"


def test_a_revert_failed_opens_its_own_incident_redacted(watching: Embedded) -> None:
    raw = event("eventbridge_database_revert_failed.json")
    assert outcome(watching, raw)["outcome"] == "incident-opened"
    assert outcome(watching, raw)["outcome"] == "incident-opened"  # redelivered: the same OpsItem
    (item,) = ops_items()
    assert item["Severity"] == "2"
    assert "could not revert" in item["Title"]
    assert "restoring the previous configuration failed" in item["Description"]
    data = json.dumps(item["OperationalData"])
    assert "accounting-database-revert-failed" in data
    assert "Hunter2-not-real" not in json.dumps(item, default=str)
    (notice,) = notices(watching)  # one message: the redelivery found the OpsItem told already
    assert notice["MessageAttributes"]["kind"]["Value"] == "accounting-database-revert-failed"
    assert "could not revert" in notice["Subject"]
    assert "Hunter2-not-real" not in json.dumps(notice)
    assert watching.executions() == []


@pytest.mark.parametrize("status", ["Reverted", "NotApplicable"])
def test_a_reverted_or_not_applicable_change_is_a_notice_once(watching: Embedded, status: str) -> None:
    raw = event("eventbridge_database_reverted.json")
    raw["detail"]["EventDetails"]["EventDetails"]["EventMetadata"]["DatabaseConfiguration"][
        "RollbackStatus"
    ] = status
    assert [outcome(watching, raw)["outcome"] for _ in range(2)] == ["notified", "duplicate"]
    (notice,) = notices(watching)
    assert status in notice["Message"]
    assert "accounting database change" in notice["Subject"]
    assert ops_items() == []
    assert watching.executions() == []


def test_null_metadata_is_read_again_from_sagemaker(watching: Embedded) -> None:
    raw = event("eventbridge_cluster_event_null_metadata.json")
    details = raw["detail"]["EventDetails"]
    watching.site.add_cluster_event(
        {
            **{key: details[key] for key in ("EventId", "ClusterArn", "ClusterName", "InstanceGroupName")},
            "InstanceId": details["InstanceId"],
            "ResourceType": "Instance",
            "EventTime": "2026-11-30T08:12:05Z",
            "EventLevel": "Warn",
            "EventDetails": {
                "EventMetadata": {
                    "SlurmHealth": {"Component": "Slurmdbd", "Status": "Unhealthy", "Reason": "DaemonDown"}
                }
            },
        }
    )
    assert outcome(watching, raw)["outcome"] == "started"
    assert (
        run_input(watching)["trigger"]["summary"]["reported"]
        == "HyperPod reported slurmdbd Unhealthy (DaemonDown)"
    )


def test_a_malformed_record_read_again_is_rejected_and_kept(watching: Embedded) -> None:
    # What SageMaker answers is outside input too: a record no parser reads is a kept reject.
    raw = event("eventbridge_cluster_event_null_metadata.json")
    details = raw["detail"]["EventDetails"]
    watching.site.add_cluster_event(
        {
            **{key: details[key] for key in ("EventId", "ClusterArn", "ClusterName", "InstanceGroupName")},
            "ResourceType": "Instance",
            "EventTime": "2026-11-30T08:12:05Z",
            "EventDetails": {
                "EventMetadata": {"SlurmHealth": {"Component": "Slurmdbd", "Status": "U" * 100}}
            },
        }
    )
    record = outcome(watching, raw)
    assert record["outcome"] == "rejected"
    assert "Status" in record["reason"]
    kept = boto3.client("sqs").receive_message(
        QueueUrl=watching.stack.outputs["HyperPodEventDeadLetterQueueUrl"]
    )["Messages"]
    assert json.loads(kept[0]["Body"])["id"] == raw["id"]
    assert watching.executions() == []


def test_null_metadata_without_a_record_falls_back_to_the_level(watching: Embedded) -> None:
    record = outcome(watching, event("eventbridge_cluster_event_null_metadata.json"))
    assert (record["outcome"], record["reason"]) == ("ignored", "event level Warn")
    assert watching.executions() == []


def test_unknown_metadata_keys_are_accepted_and_ignored(watching: Embedded) -> None:
    raw = event("eventbridge_cluster_event_error.json")
    raw["detail"]["EventDetails"]["EventDetails"] = {
        "EventMetadata": {"InstanceGroupScaling": {"TargetCount": 2}, "SomethingNew": {"Answer": 42}}
    }
    assert outcome(watching, raw)["outcome"] == "started"  # an Error on the controller group, as before
