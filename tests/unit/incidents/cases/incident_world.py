"""What the incident tests share: a request, OpsItem answers, and the World (Stubber for
OpsCenter and Incident Manager, moto for SNS)."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.stub import Stubber

from hyperpod_ha.incidents import Incidents, IncidentSettings, OpenRequest
from hyperpod_ha.incidents.keys import (
    CLUSTER_KEY,
    EXECUTION_KEY,
    INCIDENT_KEY,
    KIND_KEY,
    NOTIFIED_KEY,
    RECOVERY_NOTIFIED_KEY,
    RESOLVED_BY_KEY,
)
from hyperpod_ha.incidents.ops_item import ops_item_request

REGION = "us-west-2"
EXECUTION = "arn:aws:states:us-west-2:123456789012:execution:FailoverVerification:ml-cluster-42"
OTHER_EXECUTION = "arn:aws:states:us-west-2:123456789012:execution:FailoverVerification:ml-cluster-41"
PLAN = "arn:aws:ssm-incidents::123456789012:response-plan/hyperpod"
INCIDENT = "arn:aws:ssm-incidents::123456789012:incident-record/hyperpod/6ebcc812-85f5-b7eb-8b2f-283e4d844308"
CLUSTER_ARN = "arn:aws:sagemaker:us-west-2:123456789012:cluster/abcd1234efgh"
OPS_ITEM = "oi-0123456789ab"
RESERVED_PREFIXES = ("amazon", "aws", "amzn", "ssm", "/amazon", "/aws", "/amzn", "/ssm")
STATE_TABLE = "state"
# The tests' clock: 2026-12-01 10:00:00 UTC.
NOW = 1_796_119_200.0


def open_event(**changes: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "action": "open",
        "cluster": "ml-cluster",
        "verdict": "DOWN",
        "reasons": ["no controller answered scontrol ping"],
        "evidence": {
            "discovery": {"cluster_arn": CLUSTER_ARN, "controllers": 2},
            "reports": [
                {"host": "ip-10-1-0-11", "ping": "Slurmctld(primary) at ip-10-1-0-11 is DOWN"},
                {"host": "ip-10-1-0-12", "ping": "Slurmctld(backup) at ip-10-1-0-12 is DOWN"},
            ],
        },
        "execution_id": EXECUTION,
    }
    event.update(changes)
    return event


def marked(**values: str) -> dict[str, dict[str, str]]:
    keys = {
        "execution": EXECUTION_KEY,
        "notified": NOTIFIED_KEY,
        "incident": INCIDENT_KEY,
        "cluster": CLUSTER_KEY,
        "kind": KIND_KEY,
        "resolved_by": RESOLVED_BY_KEY,
        "recovery_notified": RECOVERY_NOTIFIED_KEY,
    }
    return {keys[name]: {"Value": value, "Type": "SearchableString"} for name, value in values.items()}


def ops_item(
    ops_item_id: str = OPS_ITEM, *, opened_ago: float | None = None, **values: str
) -> dict[str, Any]:
    """GetOpsItem's answer; ``opened_ago``: its CreatedTime, seconds before :data:`NOW`."""
    item: dict[str, Any] = {
        "OpsItemId": ops_item_id,
        "Source": "hyperpod-ha",
        "OperationalData": marked(**values),
    }
    if opened_ago is not None:
        item["CreatedTime"] = dt.datetime.fromtimestamp(NOW - opened_ago, dt.UTC)
    return {"OpsItem": item}


def ops_summary(
    ops_item_id: str, status: str = "Open", source: str = "hyperpod-ha", **values: str
) -> dict[str, Any]:
    return {"OpsItemId": ops_item_id, "Source": source, "Status": status, "OperationalData": marked(**values)}


@dataclass
class World:
    ssm: Any
    ssm_stub: Stubber
    im: Any
    im_stub: Stubber
    topic: str
    queue: str

    def incidents(
        self, *, plan: str | None = None, topic: bool = True, reminder_seconds: int = 3600, now: float = NOW
    ) -> Incidents:
        settings = IncidentSettings(
            region=REGION,
            topic_arn=self.topic if topic else None,
            response_plan_arn=plan,
            reminder_seconds=reminder_seconds,
            state_table=STATE_TABLE,
        )
        return Incidents(
            self.ssm,
            boto3.client("sns"),
            settings,
            incident_manager=self.im if plan else None,
            dynamodb=boto3.client("dynamodb"),
            clock=lambda: now,
        )

    def messages(self) -> list[dict[str, Any]]:
        sqs = boto3.client("sqs")
        received = sqs.receive_message(QueueUrl=self.queue, MaxNumberOfMessages=10).get("Messages", [])
        return [json.loads(message["Body"]) for message in received]

    def expect_create(self, request: OpenRequest, ops_item_id: str = OPS_ITEM) -> None:
        self.ssm_stub.add_response(
            "create_ops_item",
            {"OpsItemId": ops_item_id},
            dict(ops_item_request(request)),
        )

    def expect_duplicate(self, ops_item_id: str | None = OPS_ITEM) -> None:
        self.ssm_stub.add_client_error(
            "create_ops_item",
            service_error_code="OpsItemAlreadyExistsException",
            service_message="The OpsItem already exists.",
            http_status_code=400,
            modeled_fields={"OpsItemId": ops_item_id} if ops_item_id else None,
        )

    def expect_get(self, item: dict[str, Any], ops_item_id: str = OPS_ITEM) -> None:
        self.ssm_stub.add_response("get_ops_item", item, {"OpsItemId": ops_item_id})

    def expect_update(self, ops_item_id: str, data: Any, **fields: Any) -> None:
        self.ssm_stub.add_response(
            "update_ops_item", {}, {"OpsItemId": ops_item_id, "OperationalData": data, **fields}
        )

    def expect_describe(self, summaries: list[dict[str, Any]], statuses: list[str], **markers: str) -> None:
        filters = [
            {"Key": "Source", "Values": ["hyperpod-ha"], "Operator": "Equal"},
            {"Key": "Status", "Values": statuses, "Operator": "Equal"},
            {
                "Key": "OperationalData",
                "Values": [json.dumps({"key": CLUSTER_KEY, "value": "ml-cluster"}, sort_keys=True)],
                "Operator": "Equal",
            },
        ]
        for key, value in markers.items():
            filters.append(
                {
                    "Key": "OperationalData",
                    "Values": [json.dumps({"key": key, "value": value}, sort_keys=True)],
                    "Operator": "Equal",
                }
            )
        self.ssm_stub.add_response(
            "describe_ops_items", {"OpsItemSummaries": summaries}, {"OpsItemFilters": filters}
        )
