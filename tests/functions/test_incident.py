"""IncidentFunction's handler: Stubber for OpsCenter and Incident Manager (moto has neither),
moto for SNS and for the Powertools idempotency table."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber
from moto import mock_aws

from hyperpod_ha.errors import ConfigurationError
from hyperpod_ha.incidents import InvalidIncidentRequest
from hyperpod_ha.incidents.keys import (
    CLUSTER_KEY,
    EXECUTION_KEY,
    NOTIFIED_KEY,
    RESOLVED_BY_KEY,
    incident_client_token,
)
from tests.conftest import load_function_module, subscribed_inbox

REGION = "us-west-2"
EXECUTION = "arn:aws:states:us-west-2:123456789012:execution:FailoverVerification:ml-cluster-42"
PLAN = "arn:aws:ssm-incidents::123456789012:response-plan/hyperpod"
INCIDENT = "arn:aws:ssm-incidents::123456789012:incident-record/hyperpod/6ebcc812-85f5-b7eb-8b2f-283e4d844308"
OPS_ITEM = "oi-0123456789ab"


@dataclass
class Context:
    function_name: str = "IncidentFunction"
    memory_limit_in_mb: int = 256
    invoked_function_arn: str = "arn:aws:lambda:us-west-2:123456789012:function:IncidentFunction"
    aws_request_id: str = "request-1"

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 60_000


@dataclass
class Stack:
    env: pytest.MonkeyPatch
    queue: str

    def messages(self) -> list[dict[str, Any]]:
        received = (
            boto3.client("sqs")
            .receive_message(QueueUrl=self.queue, MaxNumberOfMessages=10)
            .get("Messages", [])
        )
        return [json.loads(message["Body"]) for message in received]


@pytest.fixture
def stack(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stack]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("CLUSTER_NAME", "ml-cluster")
    monkeypatch.setenv("INCIDENT_RESPONSE_PLAN_ARN", "")
    with mock_aws():
        topic = boto3.client("sns").create_topic(Name="hyperpod-ha")["TopicArn"]
        queue = subscribed_inbox(topic)
        boto3.client("dynamodb").create_table(
            TableName="idempotency",
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        monkeypatch.setenv("NOTIFICATION_TOPIC_ARN", topic)
        monkeypatch.setenv("IDEMPOTENCY_TABLE", "idempotency")
        yield Stack(monkeypatch, queue)


def _searchable(**values: str) -> dict[str, dict[str, str]]:
    return {key: {"Value": value, "Type": "SearchableString"} for key, value in values.items()}


OPEN_EVENT = {
    "action": "open",
    "cluster": "ml-cluster",
    "verdict": "SPLIT_BRAIN",
    "reasons": ["ip-10-1-0-11 and ip-10-1-0-12 both report 'Running as primary controller'"],
    "evidence": {"reports": [{"host": "ip-10-1-0-11", "slurmdbd_conf": "StoragePass=hunter2"}]},
    "execution_id": EXECUTION,
}


def test_open_through_the_handler(stack: Stack) -> None:
    stack.env.setenv("INCIDENT_RESPONSE_PLAN_ARN", PLAN)
    app = load_function_module("incident", fresh=True)
    with (
        Stubber(app._function().incidents.ssm) as ssm,
        Stubber(app._function().incidents.incident_manager) as im,
    ):
        ssm.add_response("create_ops_item", {"OpsItemId": OPS_ITEM})
        ssm.add_response(
            "get_ops_item",
            {
                "OpsItem": {
                    "OpsItemId": OPS_ITEM,
                    "OperationalData": _searchable(**{EXECUTION_KEY: EXECUTION}),
                }
            },
        )
        im.add_response(
            "start_incident",
            {"incidentRecordArn": INCIDENT},
            {
                "responsePlanArn": PLAN,
                "clientToken": incident_client_token(EXECUTION, "SPLIT_BRAIN"),
                "title": ANY,
                "impact": 1,
                "triggerDetails": ANY,
                "relatedItems": ANY,
            },
        )
        ssm.add_response("update_ops_item", {})
        result = app.lambda_handler(dict(OPEN_EVENT), Context())
        ssm.assert_no_pending_responses()
        im.assert_no_pending_responses()
    assert result["ops_item_id"] == OPS_ITEM
    assert result["created"] is True
    assert result["incident_arn"] == INCIDENT
    assert result["notified"] is True
    assert set(result["links"]) == {"execution", "ops_item", "incident"}
    json.dumps(result)
    [message] = stack.messages()
    assert (
        message["Subject"]
        == "[hyperpod-ha] ml-cluster: SPLIT_BRAIN: more than one Slurm controller is active (sev 1)"
    )
    assert {name: value["Value"] for name, value in message["MessageAttributes"].items()} == {
        "cluster": "ml-cluster",
        "kind": "SPLIT_BRAIN",
        "severity": "1",
        "event": "opened",
        "dedup_key": "hyperpod-ha:ml-cluster:SPLIT_BRAIN",
        "level": "critical",
        "verdict": "SPLIT_BRAIN",
    }
    assert "hunter2" not in json.dumps(message)


def test_open_without_incident_manager_never_calls_it(stack: Stack) -> None:
    app = load_function_module("incident", fresh=True)
    with Stubber(app._function().incidents.ssm) as ssm:
        ssm.add_response("create_ops_item", {"OpsItemId": OPS_ITEM})
        ssm.add_response(
            "get_ops_item",
            {
                "OpsItem": {
                    "OpsItemId": OPS_ITEM,
                    "OperationalData": _searchable(**{EXECUTION_KEY: EXECUTION, NOTIFIED_KEY: EXECUTION}),
                }
            },
        )
        result = app.lambda_handler(dict(OPEN_EVENT), Context())
    assert (result["incident_arn"], result["notified"]) == (None, True)
    assert app._function().incidents.incident_manager is None
    assert stack.messages() == []  # this execution's message went out on an earlier attempt


def _expect_nothing_open(ssm: Stubber) -> None:
    ssm.add_response("describe_ops_items", {"OpsItemSummaries": []})  # resolved by this run on an earlier try
    ssm.add_response("describe_ops_items", {"OpsItemSummaries": []})  # still open


def test_verified_is_announced_once_even_when_resolve_is_retried(stack: Stack) -> None:
    app = load_function_module("incident", fresh=True)
    snapshot = {
        "kind": "backup",
        "id": "backup-0123456789abcdef0",
        "status": "AVAILABLE",
        "done": True,
        "succeeded": True,
    }
    event = {
        "action": "resolve",
        "cluster": "ml-cluster",
        "verdict": "HEALTHY",
        "reasons": ["primary active, standby answers"],
        "execution_id": EXECUTION,
        "snapshot": snapshot,
    }
    with Stubber(app._function().incidents.ssm) as ssm:
        _expect_nothing_open(ssm)
        _expect_nothing_open(ssm)
        first = app.lambda_handler(dict(event), Context())
        again = app.lambda_handler(dict(event), Context())
    assert first == again == {"resolved": [], "notified": True, "message": "verified"}
    [message] = stack.messages()
    assert message["Subject"] == "[hyperpod-ha] ml-cluster: verified HEALTHY (sev 4)"
    (line,) = [line for line in message["Message"].splitlines() if line.startswith("Snapshot:")]
    assert line.split(":", 1)[1].strip() == "backup backup-0123456789abcdef0 AVAILABLE (ok)"
    assert "  - primary active, standby answers" in message["Message"]
    # Another run is a new verification and says so.
    with Stubber(app._function().incidents.ssm) as ssm:
        _expect_nothing_open(ssm)
        app.lambda_handler({**event, "execution_id": EXECUTION + "-next"}, Context())
    assert len(stack.messages()) == 1


def test_verified_without_an_idempotency_table_still_announces(stack: Stack) -> None:
    stack.env.delenv("IDEMPOTENCY_TABLE")
    app = load_function_module("incident", fresh=True)
    with Stubber(app._function().incidents.ssm) as ssm:
        _expect_nothing_open(ssm)
        result = app.lambda_handler(
            {
                "action": "resolve",
                "cluster": "ml-cluster",
                "verdict": "FAILED_OVER",
                "execution_id": EXECUTION,
            },
            Context(),
        )
    assert result["message"] == "verified"
    assert len(stack.messages()) == 1


def test_resolve_through_the_handler(stack: Stack) -> None:
    app = load_function_module("incident", fresh=True)
    open_item = {
        "OpsItemId": OPS_ITEM,
        "Source": "hyperpod-ha",
        "Status": "Open",
        "OperationalData": _searchable(**{CLUSTER_KEY: "ml-cluster", "hyperpod-ha:kind": "DOWN"}),
    }
    with Stubber(app._function().incidents.ssm) as ssm:
        ssm.add_response("describe_ops_items", {"OpsItemSummaries": []})
        ssm.add_response("describe_ops_items", {"OpsItemSummaries": [open_item]})
        ssm.add_response(
            "update_ops_item",
            {},
            {
                "OpsItemId": OPS_ITEM,
                "Status": "Resolved",
                "OperationalData": {
                    RESOLVED_BY_KEY: {"Type": "SearchableString", "Value": EXECUTION},
                    "hyperpod-ha:resolution": ANY,
                },
            },
        )
        ssm.add_response("update_ops_item", {})
        result = app.lambda_handler(
            {"action": "resolve", "cluster": "ml-cluster", "verdict": "HEALTHY", "execution_id": EXECUTION},
            Context(),
        )
        ssm.assert_no_pending_responses()
    assert result == {"resolved": [OPS_ITEM], "notified": True, "message": "recovered"}
    [message] = stack.messages()
    assert message["Subject"] == "[hyperpod-ha] ml-cluster: recovered (HEALTHY): DOWN resolved (sev 1)"


@pytest.mark.parametrize(
    "event",
    [
        {},
        {"action": "close"},
        {"action": "open", "cluster": "ml-cluster"},
        {"action": "resolve", "cluster": "ml-cluster"},
    ],
)
def test_bad_requests_are_typed_rejections(stack: Stack, event: dict[str, Any]) -> None:
    app = load_function_module("incident", fresh=True)
    with pytest.raises(InvalidIncidentRequest):
        app.lambda_handler(event, Context())


def test_a_malformed_setting_fails_the_first_invocation_naming_it(stack: Stack) -> None:
    stack.env.setenv("INCIDENT_RESPONSE_PLAN_ARN", "hyperpod")
    app = load_function_module("incident", fresh=True)
    with pytest.raises(ConfigurationError, match="INCIDENT_RESPONSE_PLAN_ARN"):
        app.lambda_handler(dict(OPEN_EVENT), Context())


# A password from the project's own alphabet (",", ":" and "^" included), in several forms.
LEAKED = "Ab,Cd:Ef^gh-12.3+4_x"


def test_a_password_in_a_verdict_reason_reaches_no_exit(stack: Stack) -> None:
    stack.env.setenv("STATE_TABLE", "state")
    boto3.client("dynamodb").create_table(
        TableName="state",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    app = load_function_module("incident", fresh=True)
    sent: list[dict[str, Any]] = []
    ssm = app._function().incidents.ssm
    ssm.meta.events.register("provide-client-params.ssm.*", lambda params, **_: sent.append(params))
    event = {
        **OPEN_EVENT,
        "reasons": [
            f"slurmdbd on ip-10-1-0-11 did not start: StoragePass={LEAKED}",
            f"roll-out: mysql -u slurm -p{LEAKED} -h db failed",
            f"drill output: {json.dumps({'conf': json.dumps({'password': LEAKED})})}",
            f"IDENTIFIED BY '{LEAKED}'",
            # Issue 35, finding 3: the forms the redaction missed.
            f"slurmrestd: SLURM_JWT={LEAKED} rejected",
            f"curl -H 'Authorization: Bearer {LEAKED}' failed",
            f"SET PASSWORD FOR 'slurm'@'%' = PASSWORD('{LEAKED}')",
            f"ALTER USER slurm IDENTIFIED VIA ed25519 USING PASSWORD('{LEAKED}')",
            f"ALTER USER slurm IDENTIFIED WITH mysql_native_password AS '{LEAKED}'",
            f"mysqladmin -u root password {LEAKED}",
            f"curl -u admin:{LEAKED} https://example.com",
            f"sshpass -p {LEAKED} ssh ctl2",
            f"redis://:{LEAKED}@cache:6379",
            "StoragePass" + " " * 80 + f"= {LEAKED}",
        ],
        "error": {"Error": "States.TaskFailed", "Cause": f"MYSQL_PWD={LEAKED} exited 1"},
    }
    with Stubber(ssm) as stub:
        stub.add_response("create_ops_item", {"OpsItemId": OPS_ITEM})
        stub.add_response(
            "get_ops_item",
            {
                "OpsItem": {
                    "OpsItemId": OPS_ITEM,
                    "OperationalData": _searchable(**{EXECUTION_KEY: EXECUTION}),
                }
            },
        )
        stub.add_response("update_ops_item", {})
        result = app.lambda_handler(event, Context())
    assert result["ops_item_id"] == OPS_ITEM
    assert [call for call in sent if "Title" in call or "OperationalData" in call]  # the OpsItem went out
    [message] = stack.messages()
    record = boto3.client("dynamodb").get_item(
        TableName="state", Key={"pk": {"S": "status#ml-cluster#verdict"}}
    )
    stored = json.loads(record["Item"]["data"]["S"])
    assert len(stored["reasons"]) == 14
    assert stored["reasons"][0] == "slurmdbd on ip-10-1-0-11 did not start: StoragePass=[redacted]"
    for where, text in (
        ("OpsItem", json.dumps(sent)),
        ("SNS", json.dumps(message)),
        ("state", json.dumps(stored)),
    ):
        for part in (LEAKED, "Cd:Ef", "gh-12"):
            assert part not in text, f"{part!r} reached the {where}"
