"""A cluster event's EventMetadata parsed (every value, unknown keys, null and partial), read
again with DescribeClusterEvent (botocore's Stubber), and HyperPod's words in the verdict."""

from __future__ import annotations

import string
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from hypothesis import given
from hypothesis import strategies as st

from hyperpod_ha.incidents.keys import KIND_DATABASE_REVERT_FAILED, KINDS_NOT_RESOLVED_BY_DEFAULT
from hyperpod_ha.ingestion import database_incidents
from hyperpod_ha.ingestion.cluster_event_metadata import (
    INCOMPLETE,
    MAX_MESSAGE_CHARS,
    DatabaseConfiguration,
    SlurmHealth,
    metadata_of,
    parse_event_metadata,
)
from hyperpod_ha.ingestion.cluster_event_records import ClusterEventRecords
from hyperpod_ha.ingestion.hyperpod_events import EventRejected
from hyperpod_ha.verdict.inputs import REPORTED_LIMIT, reported_by_trigger
from hyperpod_ha.verdict.reasons import Reason, ReasonCode

EVENT_ID = "5b0e1a52-6f3c-4d8e-9a71-2c4b8d0e6f11"


@pytest.mark.parametrize("reason", ["DaemonDown", "DaemonDisabled", "DbUnreachable"])
def test_each_unhealthy_reason(reason: str) -> None:
    parsed = parse_event_metadata(
        {"SlurmHealth": {"Component": "Slurmdbd", "Status": "Unhealthy", "Reason": reason}}
    )
    assert parsed.complete
    assert parsed.slurm_health == SlurmHealth("Slurmdbd", "Unhealthy", reason)
    assert parsed.slurm_health.unhealthy
    assert parsed.slurm_health.describe() == f"HyperPod reported slurmdbd Unhealthy ({reason})"


def test_healthy_has_no_reason() -> None:
    parsed = parse_event_metadata({"SlurmHealth": {"Component": "Slurmdbd", "Status": "Healthy"}})
    assert parsed.slurm_health is not None
    assert parsed.slurm_health.healthy
    assert not parsed.slurm_health.unhealthy
    assert parsed.slurm_health.describe() == "HyperPod reported slurmdbd Healthy"


@pytest.mark.parametrize("status", ["NotApplicable", "Reverted", "RevertFailed"])
def test_each_rollback_status(status: str) -> None:
    parsed = parse_event_metadata(
        {"DatabaseConfiguration": {"RollbackStatus": status, "Advisory": " a ", "FailureMessage": "b"}}
    )
    assert parsed.database == DatabaseConfiguration(status, "a", "b")
    assert parsed.database.revert_failed is (status == "RevertFailed")


def test_unknown_keys_are_accepted_and_ignored() -> None:
    parsed = parse_event_metadata(
        {"Cluster": {"x": 1}, "InstanceGroup": {}, "Instance": {"y": [1]}, "SomethingNew": "z"}
    )
    assert parsed.complete
    assert not parsed.relevant


def test_an_unknown_status_is_kept() -> None:
    parsed = parse_event_metadata({"SlurmHealth": {"Component": "Slurmdbd", "Status": "Degraded"}})
    assert parsed.slurm_health is not None
    assert not parsed.slurm_health.healthy
    assert not parsed.slurm_health.unhealthy


@pytest.mark.parametrize(
    "raw",
    [
        None,
        {},
        {"SlurmHealth": None},
        {"SlurmHealth": {"Component": "Slurmdbd"}},
        {"SlurmHealth": {"Status": "Unhealthy"}},
        {"DatabaseConfiguration": None},
        {"DatabaseConfiguration": {"FailureMessage": "x"}},
    ],
)
def test_null_or_partial_metadata_is_incomplete(raw: Any) -> None:
    parsed = parse_event_metadata(raw)
    assert not parsed.complete
    assert parsed.slurm_health is None
    assert parsed.database is None


def test_the_form_without_metadata_is_none() -> None:
    assert metadata_of({"EventLevel": "Error"}) is None
    assert metadata_of({"EventDetails": None}) == INCOMPLETE
    assert metadata_of({"EventDetails": {"EventMetadata": None}}) == INCOMPLETE


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("text", "EventMetadata is not an object"),
        ({"SlurmHealth": "x"}, "SlurmHealth is not an object"),
        ({"SlurmHealth": {"Component": 5, "Status": "Healthy"}}, "SlurmHealth.Component is not a string"),
        ({"SlurmHealth": {"Component": "S" * 65, "Status": "Healthy"}}, "longer than 64"),
        ({"DatabaseConfiguration": []}, "DatabaseConfiguration is not an object"),
        (
            {"DatabaseConfiguration": {"RollbackStatus": "Reverted", "Advisory": 3}},
            "Advisory is not a string",
        ),
    ],
)
def test_wrong_types_are_rejected(raw: Any, message: str) -> None:
    with pytest.raises(EventRejected, match=message):
        parse_event_metadata(raw)


def test_inner_event_details_of_the_wrong_type_is_rejected() -> None:
    with pytest.raises(EventRejected, match=r"EventDetails\.EventDetails is not an object"):
        metadata_of({"EventDetails": "x"})


@given(
    st.text(max_size=5000), st.text(alphabet=string.ascii_letters + string.digits, min_size=8, max_size=64)
)
def test_messages_are_bounded_and_scrubbed(text: str, secret: str) -> None:
    raw = {"DatabaseConfiguration": {"RollbackStatus": "RevertFailed", "FailureMessage": text}}
    parsed = parse_event_metadata(raw)
    assert parsed.database is not None
    assert len(parsed.database.failure_message) <= MAX_MESSAGE_CHARS
    raw["DatabaseConfiguration"]["FailureMessage"] = f"connect failed: password={secret} at db"
    scrubbed = parse_event_metadata(raw).database
    assert scrubbed is not None
    assert secret not in scrubbed.failure_message


def test_the_revert_failed_request_names_the_kind_and_redacts() -> None:
    assert database_incidents.KIND_DATABASE_REVERT_FAILED == KIND_DATABASE_REVERT_FAILED
    assert KIND_DATABASE_REVERT_FAILED in KINDS_NOT_RESOLVED_BY_DEFAULT
    database = DatabaseConfiguration("RevertFailed", "update again", "connect failed (password=Hunter2)")
    request = database_incidents.revert_failed_request("ml-cluster", EVENT_ID, database)
    assert request["kind"] == KIND_DATABASE_REVERT_FAILED
    # One id per event (a redelivery finds the same incident), short whatever the event id's length.
    assert request["execution_id"].startswith("hyperpod-event:")
    long_id = database_incidents.revert_failed_request("ml-cluster", "e" * 256, database)["execution_id"]
    assert len(long_id) <= 64
    assert (
        long_id == database_incidents.revert_failed_request("ml-cluster", "e" * 256, database)["execution_id"]
    )
    assert long_id != request["execution_id"]
    assert "Hunter2" not in str(request)
    assert any("connect failed" in reason for reason in request["reasons"])


def _records() -> tuple[ClusterEventRecords, Stubber]:
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    return ClusterEventRecords(sagemaker), Stubber(sagemaker)


def test_the_record_is_read_again() -> None:
    records, stub = _records()
    stub.add_response(
        "describe_cluster_event",
        {
            "EventDetails": {
                "EventId": EVENT_ID,
                "ClusterArn": "arn:aws:sagemaker:us-east-1:123456789012:cluster/abc",
                "ClusterName": "ml-cluster",
                "ResourceType": "Instance",
                "EventTime": "2026-11-30T08:12:05Z",
                "EventDetails": {
                    "EventMetadata": {
                        "SlurmHealth": {
                            "Component": "Slurmdbd",
                            "Status": "Unhealthy",
                            "Reason": "DaemonDown",
                        }
                    }
                },
            }
        },
        {"ClusterName": "ml-cluster", "EventId": EVENT_ID},
    )
    with stub:
        found = records.metadata("ml-cluster", EVENT_ID)
    stub.assert_no_pending_responses()
    assert found is not None
    assert found.slurm_health == SlurmHealth("Slurmdbd", "Unhealthy", "DaemonDown")


def test_a_missing_record_is_none_and_other_errors_propagate() -> None:
    records, stub = _records()
    stub.add_client_error("describe_cluster_event", "ResourceNotFound")
    stub.add_client_error("describe_cluster_event", "ThrottlingException")
    with stub:
        assert records.metadata("ml-cluster", EVENT_ID) is None
        with pytest.raises(Exception, match="ThrottlingException"):
            records.metadata("ml-cluster", EVENT_ID)


def test_an_id_that_is_not_hyperpods_is_not_looked_up() -> None:
    records, stub = _records()
    with stub:  # no response queued: any call would fail
        assert records.metadata("ml-cluster", "evt-0123456789abcdef") is None


def test_the_verdict_request_carries_what_the_trigger_reported() -> None:
    trigger = {"trigger": {"summary": {"reported": "HyperPod reported slurmdbd Unhealthy (DbUnreachable)"}}}
    assert reported_by_trigger(trigger) == (
        Reason(ReasonCode.HYPERPOD_REPORTED, "HyperPod reported slurmdbd Unhealthy (DbUnreachable)"),
    )
    assert reported_by_trigger({"trigger": {"summary": {}}}) == ()
    assert reported_by_trigger({"trigger": {"summary": {"reported": 5}}}) == ()
    assert reported_by_trigger({}) == ()
    (long,) = reported_by_trigger({"trigger": {"summary": {"reported": "x" * 5000 + " token=abc"}}})
    assert len(long.text) <= REPORTED_LIMIT
    (secret,) = reported_by_trigger({"trigger": {"summary": {"reported": "failed password=abc123"}}})
    assert "abc123" not in secret.text


def test_the_verdict_tells_what_hyperpod_reported_beside_its_own_reasons() -> None:
    from hyperpod_ha.verdict import VerdictPolicy, VerdictRequest, decide

    told = "HyperPod reported slurmdbd Unhealthy (DaemonDown)"
    plain = decide(VerdictRequest.from_event({"reports": []}), VerdictPolicy())
    reported = decide(
        VerdictRequest.from_event({"reports": [], "trigger": {"summary": {"reported": told}}}),
        VerdictPolicy(),
    )
    # The rules' verdict is unchanged: HyperPod's words are told, not weighed.
    assert reported["verdict"] == plain["verdict"]
    assert reported["reasons"] == [*plain["reasons"], told]
    assert reported["reason_codes"] == [*plain["reason_codes"], "hyperpod-reported"]
