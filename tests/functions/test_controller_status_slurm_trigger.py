"""ControllerStatusFunction on the embedded stack, Slurm's trigger message: a run started or
joined with a ``slurm-trigger`` trigger, once per MessageId; a full accounting buffer opens the
accounting incident through IncidentFunction; a malformed one is kept and starts nothing."""

from __future__ import annotations

import copy
import json
from typing import Any

import boto3
import pytest

from hyperpod_ha import state_table
from tests.conftest import Embedded, subscribed_inbox
from tests.functions.test_controller_status import only_record, sns_event, with_message
from tests.functions.test_hyperpod_event import notices
from tests.functions.test_hyperpod_event_metadata import ops_items

BACKUP_FAILURE = "sns_slurm_trigger_backup_failure.json"
BUFFER_FULL = "sns_slurm_trigger_accounting_buffer_full.json"
BACKUP_FAILURE_ID = "7a1c3e5f-2b4d-4c6e-8f0a-1b2c3d4e5f61"


@pytest.fixture
def watching(embedded_held: Embedded) -> Embedded:
    subscribed_inbox(embedded_held.stack.outputs["NotificationTopicArn"], name="notices")
    return embedded_held


def invoke(embedded: Embedded, event: dict[str, Any]) -> dict[str, Any]:
    return only_record(embedded.stack.invoke("ControllerStatusFunction", event))


def run_input(execution_arn: str) -> dict[str, Any]:
    described = boto3.client("stepfunctions").describe_execution(executionArn=execution_arn)
    loaded: dict[str, Any] = json.loads(described["input"])
    return loaded


def dead_letters(embedded: Embedded) -> list[dict[str, Any]]:
    found = boto3.client("sqs").receive_message(
        QueueUrl=embedded.stack.outputs["ControllerStatusDeadLetterQueueUrl"],
        MessageAttributeNames=["All"],
        MaxNumberOfMessages=10,
    )
    return [dict(message) for message in found.get("Messages", [])]


def test_a_dead_standbys_trigger_starts_a_run_as_slurms(watching: Embedded) -> None:
    record = invoke(watching, sns_event(BACKUP_FAILURE))
    assert (record["outcome"], record["source"], record["event"], record["host"]) == (
        "started",
        "slurm-trigger",
        "backup_slurmctld_failure",
        "ip-10-1-0-11",
    )
    (execution,) = watching.executions()
    assert execution["executionArn"] == record["execution_arn"]
    request = run_input(record["execution_arn"])
    assert request["trigger"] == {
        "source": "slurm-trigger",
        "id": BACKUP_FAILURE_ID,
        "summary": {
            "event": "backup_slurmctld_failure",
            "host": "ip-10-1-0-11",
            "at": "2026-12-06T17:00:00Z",
        },
        # The program's own time: the run checks until SlurmctldTimeout + margin after it.
        "time": "2026-12-06T17:00:00.000Z",
    }
    assert (
        request["reason"]
        == "Slurm's trigger backup_slurmctld_failure fired on ip-10-1-0-11 at 2026-12-06T17:00:00Z"
    )
    assert ops_items() == []
    assert notices(watching) == []


def test_one_trigger_delivered_three_times_gives_one_run(watching: Embedded) -> None:
    event = sns_event(BACKUP_FAILURE)
    assert [invoke(watching, event)["outcome"] for _ in range(3)] == ["started", "duplicate", "duplicate"]
    assert len(watching.executions()) == 1


def test_a_trigger_in_an_on_off_burst_joins_its_run(watching: Embedded) -> None:
    off = with_message(sns_event(), "m-1", "Slurm Controller is OFF (10.1.0.11, Backup Node)")
    records = [invoke(watching, off), invoke(watching, sns_event(BACKUP_FAILURE))]
    assert [r["outcome"] for r in records] == ["started", "joined"]
    assert records[0]["execution_arn"] == records[1]["execution_arn"]
    lease = state_table.read_lease(boto3.client("dynamodb"), watching.stack.ref("StateTable"), "ml-cluster")
    assert lease is not None
    assert lease.joined == {f"slurm-trigger:{BACKUP_FAILURE_ID}"}


def test_a_full_accounting_buffer_opens_the_accounting_incident_once(watching: Embedded) -> None:
    event = sns_event(BUFFER_FULL)
    first, again = invoke(watching, event), invoke(watching, event)
    assert (first["outcome"], first["event"]) == ("started", "primary_slurmctld_acct_buffer_full")
    assert again["outcome"] == "duplicate"
    (item,) = ops_items()
    assert first["incident"] == {"kind": "accounting-at-risk", "ops_item_id": item["OpsItemId"]}
    assert item["Severity"] == "2"
    data = json.dumps(item["OperationalData"])
    assert "accounting-at-risk" in data
    assert "primary_slurmctld_acct_buffer_full" in data
    assert first["execution_arn"] in data  # the incident names the run that checks the controllers
    (notice,) = notices(watching)
    assert notice["MessageAttributes"]["kind"]["Value"] == "accounting-at-risk"
    assert "Slurm's trigger primary_slurmctld_acct_buffer_full fired on ip-10-1-0-11" in notice["Message"]
    assert "Slurm's trigger primary_slurmctld_acct_buffer_full (SNS message" in notice["Message"]
    assert len(watching.executions()) == 1


def test_a_buffer_full_after_a_failed_incident_is_answered_again_with_the_same_run(
    watching: Embedded, monkeypatch: pytest.MonkeyPatch
) -> None:
    # IncidentFunction refused once: the delivery failed (Lambda retries it), nothing recorded.
    from hyperpod_ha.ingestion.database_incidents import IncidentFunctionClient, IncidentNotOpened
    from hyperpod_ha_dev.embedded.functions import FunctionError

    def refused(self: IncidentFunctionClient, request: dict[str, Any]) -> dict[str, Any]:
        raise IncidentNotOpened("IncidentFunction failed: Throttled")

    event = sns_event(BUFFER_FULL)
    with monkeypatch.context() as patched:
        patched.setattr(IncidentFunctionClient, "ask", refused)
        with pytest.raises(FunctionError, match="IncidentNotOpened"):
            watching.stack.invoke("ControllerStatusFunction", event)
    retried = invoke(watching, event)
    # The retry finds the lease its first delivery took: that run, not a second; then the incident.
    assert retried["outcome"] == "duplicate"
    (execution,) = watching.executions()
    assert retried["execution_arn"] == execution["executionArn"]
    (item,) = ops_items()
    assert retried["incident"]["ops_item_id"] == item["OpsItemId"]


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("Slurm trigger fini fired on ctl1 at 2026-12-06T17:00:00Z", "not one of the triggers"),
        ("Slurm trigger backup_slurmctld_failure fired on ctl1", "not 'Slurm trigger"),
        ("Slurm trigger backup_slurmctld_failure fired on " + "a" * 300_000, "longer than 256"),
    ],
)
def test_a_malformed_trigger_is_rejected_kept_and_starts_nothing(
    watching: Embedded, message: str, reason: str
) -> None:
    event = with_message(sns_event(BUFFER_FULL), "m-bad", message)
    record = invoke(watching, event)
    assert record["outcome"] == "rejected"
    assert reason in record["reason"]
    assert watching.executions() == []
    assert ops_items() == []
    (kept,) = dead_letters(watching)
    body = json.loads(kept["Body"])
    assert body["id"] == "m-bad"
    assert kept["MessageAttributes"]["reason"]["StringValue"] == record["reason"]
    assert len(kept["Body"].encode()) < 256 * 1024


def test_a_trigger_published_to_the_failover_topic_starts_a_real_execution(embedded_held: Embedded) -> None:
    raw = copy.deepcopy(sns_event(BACKUP_FAILURE)["Records"][0]["Sns"])
    message_id = boto3.client("sns").publish(
        TopicArn=embedded_held.site.failover_topic_arn, Subject=raw["Subject"], Message=raw["Message"]
    )["MessageId"]
    (execution,) = embedded_held.executions()
    assert execution["status"] == "RUNNING"
    trigger = run_input(execution["executionArn"])["trigger"]
    assert (trigger["source"], trigger["id"]) == ("slurm-trigger", message_id)
