"""Status records: one item per cluster and kind, read back together; a failed write is not fatal."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from hyperpod_ha.status_records import VERDICT_NAMES, StatusRecords, redundancy_record, verdict_metric
from hyperpod_ha.verdict import VerdictName


@pytest.fixture
def table() -> Iterator[str]:
    with mock_aws():
        boto3.client("dynamodb").create_table(
            TableName="state",
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield "state"


def test_the_last_record_of_each_kind_is_kept_per_cluster(table: str) -> None:
    records = StatusRecords(boto3.client("dynamodb"), table, clock=lambda: 1000.0)
    assert records.put("a", "verdict", {"verdict": "DOWN"})
    assert records.put("a", "verdict", {"verdict": "HEALTHY"})
    assert records.put("a", "drill", {"outcome": "completed", "takeover_seconds": 3.5})
    assert records.put("b", "snapshot", {"id": "backup-1"})
    assert records.read("a") == {
        "verdict": {"recorded_at": 1000, "verdict": "HEALTHY"},
        "drill": {"recorded_at": 1000, "outcome": "completed", "takeover_seconds": 3.5},
    }
    assert records.read("c") == {}


def test_a_failed_write_is_logged_not_raised(table: str) -> None:
    assert StatusRecords(boto3.client("dynamodb"), "no-such-table").put("a", "verdict", {}) is False


def test_an_oversized_record_is_cut_to_its_keys(table: str) -> None:
    records = StatusRecords(boto3.client("dynamodb"), table)
    records.put("a", "rotation", {"controllers": ["x" * 100] * 400})
    assert records.read("a")["rotation"]["truncated"] is True


@pytest.mark.parametrize(
    ("verdict", "metric"),
    [
        ("HEALTHY", "VerdictHealthy"),
        ("FAILED_OVER", "VerdictFailedOver"),
        ("SPLIT_BRAIN", "VerdictSplitBrain"),
    ],
)
def test_verdict_metric_names(verdict: str, metric: str) -> None:
    assert verdict_metric(verdict) == metric


def test_a_name_that_is_not_a_verdict_has_no_metric() -> None:
    assert verdict_metric("rollout-failed") is None


def test_the_records_name_every_verdict_and_only_them() -> None:
    assert set(VerdictName.__members__) == VERDICT_NAMES


def test_the_accounting_record_keeps_known_keys_bounded() -> None:
    from hyperpod_ha.status_records import accounting_record

    assert accounting_record(None) is None
    assert accounting_record("external") is None
    kept = accounting_record(
        {
            "mode": "external",
            "config_strategy": "Managed" * 10,
            "extra": "dropped",
            "database": {"endpoint": "e" * 400, "port": 3306, "name": "acct", "secret_arn": "arn", "x": 1},
        }
    )
    assert kept == {
        "mode": "external",
        "config_strategy": ("Managed" * 10)[:32],
        "database": {"endpoint": "e" * 255, "port": 3306, "name": "acct", "secret_arn": "arn"},
    }


def test_the_controllers_record_keeps_the_status_table_s_fields_bounded() -> None:
    from hyperpod_ha.status_records import MAX_CONTROLLERS, controllers_record

    assert controllers_record(None) is None
    assert controllers_record({}) is None
    assert controllers_record(["ctl1"]) is None
    evidence = {
        "ctl1": {
            "position": 0,
            "instance_id": "i-0ctl1",
            "address": "10.1.0.11",
            "status": "CHECKED",
            "slurmctld": "running",
            "active": False,
            "answers_ping": True,
            "writes_heartbeat": False,
            "slurmdbd_reachable": True,
            "heartbeat_age_seconds": 3.7,
            "slurm_conf_resolved": "/etc/slurm/slurm.conf",
            "slurm_version": "25.11.7",
            "readyz": 500,
        },
        "ctl2": {
            "position": "1",
            "active": "yes",
            "address": "a" * 500,
            "heartbeat_age_seconds": float("nan"),
        },
        "ctl3": "not an entry",
    }
    first, second = controllers_record(evidence) or []
    assert first == {
        "name": "ctl1",
        "position": 0,
        "instance_id": "i-0ctl1",
        "address": "10.1.0.11",
        "status": "CHECKED",
        "slurmctld": "running",
        "active": False,
        "answers_ping": True,
        "writes_heartbeat": False,
        "slurmdbd_reachable": True,
        "heartbeat_age_seconds": 3,
        "slurm_version": "25.11.7",
        "readyz": 500,
    }
    assert (second["position"], second["active"], second["heartbeat_age_seconds"]) == (None, None, None)
    assert (second["slurm_version"], second["readyz"]) == (None, None)
    assert len(second["address"]) == 64
    many = {f"ctl{i}": {"position": i} for i in range(20)}
    assert len(controllers_record(many) or []) == MAX_CONTROLLERS


@pytest.mark.parametrize(
    ("event", "kept"),
    [
        (
            {"redundancy": "none", "standbys": [], "not_ready": {"ctl1": "slurmctld not running"}},
            {"redundancy": "none", "standbys": [], "not_ready": {"ctl1": "slurmctld not running"}},
        ),
        (
            {"redundancy": "full", "standbys": ["ctl2", 7], "not_ready": None},
            {"redundancy": "full", "standbys": ["ctl2"], "not_ready": {}},
        ),
        ({"redundancy": "spare"}, None),  # not a level
        ({}, None),  # a run from before redundancy, or another caller
        (
            {"redundancy": "reduced", "standbys": ["x" * 999] * 40, "not_ready": {"y": "z" * 999, "w": 5}},
            {"redundancy": "reduced", "standbys": ["x" * 255] * 32, "not_ready": {"y": "z" * 512}},
        ),
    ],
)
def test_the_redundancy_record_is_small_and_known(event: dict[str, Any], kept: dict[str, Any] | None) -> None:
    assert redundancy_record(event) == kept
