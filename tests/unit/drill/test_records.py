"""DrillRecords' OpsItem: tagged like IncidentFunction's, or IAM refuses it (tests/unit/test_iam.py)."""

from __future__ import annotations

from typing import Any

import boto3
from botocore.stub import ANY, Stubber

from hyperpod_ha.drill.records import DrillRecords

TAGS = [{"Key": "created-by", "Value": "hyperpod-ha"}, {"Key": "cluster", "Value": "ml-cluster"}]


def _create(ops_item_id: str) -> dict[str, Any]:
    return {"OpsItemId": ops_item_id}


def test_the_drill_ops_item_carries_the_tags_iam_requires() -> None:
    ssm = boto3.client("ssm", region_name="us-east-1")
    expected = {
        "Title": "drill",
        "Description": "body",
        "Source": "hyperpod-ha",
        "Category": "Availability",
        "Severity": "4",
        "OperationalData": ANY,
        "Tags": TAGS,
    }
    with Stubber(ssm) as stub:
        stub.add_response("create_ops_item", _create("oi-000000000001"), expected)
        stub.add_response("update_ops_item", {}, {"OpsItemId": "oi-000000000001", "Status": "Resolved"})
        records = DrillRecords(ssm, boto3.client("sns", region_name="us-east-1"), None)
        assert (
            records.record("ml-cluster", "exec-1", "drill", "body", {"outcome": "completed"})
            == "oi-000000000001"
        )
        stub.assert_no_pending_responses()
