"""Incidents: OpsItems (Stubber: moto has no OpsCenter), Incident Manager (Stubber), SNS (moto).

The Stubber checks every request against the real API model, so the request shapes here are
the ones AWS would receive.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber
from hypothesis import given, settings
from hypothesis import strategies as st
from moto import mock_aws

from hyperpod_ha import incidents
from hyperpod_ha.incidents import (
    CLUSTER_KEY,
    EXECUTION_KEY,
    INCIDENT_KEY,
    KIND_KEY,
    NOTIFIED_KEY,
    OPERATIONAL_DATA_VALUE_LIMIT,
    RECOVERY_NOTIFIED_KEY,
    RESOLVED_BY_KEY,
    IncidentFailed,
    Incidents,
    IncidentSettings,
    InvalidIncidentRequest,
    OpenRequest,
    ResolveRequest,
)
from tests.conftest import subscribed_inbox

REGION = "us-west-2"
EXECUTION = "arn:aws:states:us-west-2:123456789012:execution:FailoverVerification:ml-cluster-42"
OTHER_EXECUTION = "arn:aws:states:us-west-2:123456789012:execution:FailoverVerification:ml-cluster-41"
PLAN = "arn:aws:ssm-incidents::123456789012:response-plan/hyperpod"
INCIDENT = "arn:aws:ssm-incidents::123456789012:incident-record/hyperpod/6ebcc812-85f5-b7eb-8b2f-283e4d844308"
CLUSTER_ARN = "arn:aws:sagemaker:us-west-2:123456789012:cluster/abcd1234efgh"
OPS_ITEM = "oi-0123456789ab"
RESERVED_PREFIXES = ("amazon", "aws", "amzn", "ssm", "/amazon", "/aws", "/amzn", "/ssm")


def _open_event(**changes: Any) -> dict[str, Any]:
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


def _data(**values: str) -> dict[str, dict[str, str]]:
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


def _item(ops_item_id: str = OPS_ITEM, **values: str) -> dict[str, Any]:
    return {
        "OpsItem": {"OpsItemId": ops_item_id, "Source": "hyperpod-ha", "OperationalData": _data(**values)}
    }


def _summary(
    ops_item_id: str, status: str = "Open", source: str = "hyperpod-ha", **values: str
) -> dict[str, Any]:
    return {"OpsItemId": ops_item_id, "Source": source, "Status": status, "OperationalData": _data(**values)}


# --- pure parts ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("verdict", "kind", "severity"),
    [
        ("DOWN", "DOWN", "1"),
        ("SPLIT_BRAIN", "SPLIT_BRAIN", "1"),
        ("UNKNOWN", "UNKNOWN", "2"),
        ("DEGRADED", "DEGRADED", "3"),
        ("DOWN", "verification-error", "2"),
        ("", "verification-error", "2"),
        ("HEALTHY", "rollout-failed", "2"),
        ("SOMETHING_NEW", "SOMETHING_NEW", "2"),
    ],
)
def test_severity_by_verdict_and_kind(verdict: str, kind: str, severity: str) -> None:
    assert incidents.severity_for(verdict, kind) == severity


def test_dedup_is_per_cluster_and_kind() -> None:
    request = OpenRequest.from_event(_open_event(kind="verification-error"))
    data = incidents.operational_data(request)
    assert json.loads(data["/aws/dedup"]["Value"]) == {
        "dedupString": "hyperpod-ha:ml-cluster:verification-error"
    }
    assert data["/aws/dedup"]["Type"] == "SearchableString"
    # Without a kind, the verdict is the kind of problem.
    assert OpenRequest.from_event(_open_event()).kind == "DOWN"


def test_ops_item_request_fields() -> None:
    request = incidents.ops_item_request(OpenRequest.from_event(_open_event(verdict="SPLIT_BRAIN")))
    assert request["Source"] == "hyperpod-ha"
    assert request["Category"] == "Availability"
    assert request["Severity"] == "1"
    assert "ml-cluster" in request["Title"]
    assert "SPLIT_BRAIN" in request["Title"]
    assert "- no controller answered scontrol ping" in request["Description"]
    assert len(request["Description"]) <= incidents.DESCRIPTION_LIMIT
    data = request["OperationalData"]
    # The cluster is the OpsItem's related resource when its ARN is known (discovery evidence).
    assert json.loads(data["/aws/resources"]["Value"]) == [{"arn": CLUSTER_ARN}]
    assert data[CLUSTER_KEY] == {"Type": "SearchableString", "Value": "ml-cluster"}
    assert data[EXECUTION_KEY]["Value"] == EXECUTION
    assert "hyperpod-ha:evidence:reports:ip-10-1-0-11" in data
    assert "hyperpod-ha:evidence:reports:ip-10-1-0-12" in data
    assert json.loads(data["hyperpod-ha:evidence:discovery"]["Value"])["controllers"] == 2


def test_the_runs_snapshot_is_kept_with_the_ops_item_and_named_in_the_message(world: World) -> None:
    snapshot = {
        "kind": "backup",
        "id": "backup-0123456789abcdef0",
        "status": "AVAILABLE",
        "done": True,
        "succeeded": True,
    }
    request = OpenRequest.from_event(_open_event(snapshot=snapshot))
    assert json.loads(incidents.operational_data(request)[incidents.SNAPSHOT_KEY]["Value"]) == snapshot
    world.expect_create(request)
    world.expect_get(_item(execution=EXECUTION))
    world.expect_update(OPS_ITEM, _data(notified=EXECUTION))
    world.incidents().open(request)
    [message] = world.messages()
    assert "Snapshot:  backup backup-0123456789abcdef0 AVAILABLE (ok)" in message["Message"]
    with pytest.raises(InvalidIncidentRequest, match="snapshot must be an object"):
        OpenRequest.from_event(_open_event(snapshot="backup"))


def test_no_related_resource_without_a_cluster_arn() -> None:
    data = incidents.operational_data(OpenRequest.from_event(_open_event(evidence={"reports": []})))
    assert "/aws/resources" not in data
    assert data[CLUSTER_KEY]["Value"] == "ml-cluster"


def test_operational_data_keys_are_allowed_and_values_bounded() -> None:
    huge = "é" * 40_000  # two bytes each: 80 KB
    evidence = {f"controller-{i}": {"stdout": huge} for i in range(40)}
    request = incidents.ops_item_request(
        OpenRequest.from_event(
            _open_event(
                evidence=evidence,
                reasons=["r" * 30_000],
                error={"Error": "States.TaskFailed", "Cause": "c" * 50_000},
            )
        )
    )
    data = request["OperationalData"]
    for key, value in data.items():
        assert len(key) <= incidents.KEY_LIMIT
        assert key in ("/aws/dedup", "/aws/resources") or not key.lower().startswith(RESERVED_PREFIXES)
        assert len(value["Value"].encode()) <= OPERATIONAL_DATA_VALUE_LIMIT
        assert value["Value"].strip()
    truncated = data["hyperpod-ha:evidence:controller-0"]["Value"]
    assert "[truncated by hyperpod-ha:" in truncated
    assert "of 80014 bytes kept" in truncated  # {"stdout": "<80000 bytes>"}
    evidence_keys = [key for key in data if key.startswith(incidents.EVIDENCE_PREFIX)]
    assert len(evidence_keys) == incidents.MAX_EVIDENCE_ENTRIES + 1
    more = json.loads(data["hyperpod-ha:evidence:more"]["Value"])
    assert more["entries"] == [f"controller-{i}" for i in range(25, 40)]
    assert "[truncated by hyperpod-ha:" in data[incidents.REASONS_KEY]["Value"]


def test_bounded_leaves_small_values_alone_and_cuts_on_a_character_boundary() -> None:
    assert incidents.bounded("small") == "small"
    cut = incidents.bounded("€" * 10_000, 1000)
    assert len(cut.encode()) <= 1000
    assert cut.startswith("€")
    cut.encode("utf-8")  # still valid text


def test_secrets_are_redacted_by_key_and_inside_text() -> None:
    evidence = {
        "slurmdbd": {
            "StoragePass": "hunter2-db",
            "conf": "StorageUser=slurm\nStoragePass=hunter2-conf\nStorageHost=db",
            "secret": {"username": "admin", "password": "hunter2-json"},
        },
        "session": {"TokenValue": "tok-abc", "StreamUrl": "wss://ssmmessages"},
        "stdout": 'config {"password": "hunter 2 spaced", "port": 3306} and mysql://admin:hunter2-url@db:3306/x',
        "checks_passed": True,
    }
    redacted = incidents.redact(evidence)
    text = json.dumps(redacted)
    for secret in ("hunter2-db", "hunter2-conf", "hunter2-json", "tok-abc", "hunter 2 spaced", "hunter2-url"):
        assert secret not in text
    assert redacted["slurmdbd"]["StoragePass"] == "[redacted]"
    assert redacted["slurmdbd"]["secret"] == "[redacted]"
    assert "StorageUser=slurm" in redacted["slurmdbd"]["conf"]
    assert "StoragePass=[redacted]" in redacted["slurmdbd"]["conf"]
    assert '"password": "[redacted]", "port": 3306' in redacted["stdout"]
    assert "mysql://admin:[redacted]@db:3306/x" in redacted["stdout"]
    assert redacted["checks_passed"] is True
    assert redacted["session"]["StreamUrl"] == "wss://ssmmessages"


@settings(max_examples=60, deadline=None)
@given(
    # A marker prefix so that the secret cannot be ordinary text of the OpsItem by chance.
    secret=st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#%*+-./").map(
        lambda tail: "zQ9x" + tail
    ),
    key=st.sampled_from(["password", "StoragePass", "secret_string", "SessionToken", "db_pass", "api_key"]),
    form=st.sampled_from(["{k}={v}", "{k}: {v}", '"{k}": "{v}"', "{k} = '{v}'"]),
)
def test_no_secret_reaches_the_ops_item(secret: str, key: str, form: str) -> None:
    line = form.format(k=key, v=secret)
    event = _open_event(
        evidence={
            "report": {key: secret, "stdout": f"before\n{line}\nafter"},
            "list": [{"host": "h", key: secret}],
        },
        reasons=[f"slurmdbd failed: {line}"],
        error={"Error": "RotationFailed", "Cause": json.dumps({"errorMessage": line})},
    )
    request = incidents.ops_item_request(OpenRequest.from_event(event))
    assert secret not in json.dumps(request)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"cluster": ""}, "cluster is required"),
        ({"cluster": "bad name!"}, "cluster is not a HyperPod cluster name"),
        ({"execution_id": None}, "execution_id is required"),
        ({"verdict": "", "kind": None}, "verdict or kind is required"),
        ({"kind": "two words"}, "kind must be"),
        ({"reasons": "one reason"}, "reasons must be a list"),
        ({"evidence": "text"}, "evidence must be an object"),
        ({"error": "boom"}, "error must be an object"),
    ],
)
def test_bad_open_requests_are_rejected_with_a_reason(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidIncidentRequest, match=message):
        OpenRequest.from_event(_open_event(**changes))


def test_resolve_request_kinds() -> None:
    default = ResolveRequest.from_event({"cluster": "c1", "verdict": "HEALTHY", "execution_id": "e"})
    assert default.covers("DOWN")
    assert default.covers(None)
    assert not default.covers("rollout-failed")
    rollout = ResolveRequest.from_event(
        {"cluster": "c1", "verdict": "HEALTHY", "execution_id": "e", "kinds": ["rollout-failed"]}
    )
    assert rollout.covers("rollout-failed")
    assert not rollout.covers("DOWN")
    with pytest.raises(InvalidIncidentRequest):
        ResolveRequest.from_event(
            {"cluster": "c1", "verdict": "HEALTHY", "execution_id": "e", "kinds": "DOWN"}
        )


def test_incident_client_token_is_stable_per_execution_and_kind() -> None:
    token = incidents.incident_client_token(EXECUTION, "DOWN")
    assert token == incidents.incident_client_token(EXECUTION, "DOWN")
    assert token != incidents.incident_client_token(OTHER_EXECUTION, "DOWN")
    assert token != incidents.incident_client_token(EXECUTION, "SPLIT_BRAIN")
    assert len(token) <= 128


# --- the adapter -----------------------------------------------------------------------------


@dataclass
class World:
    ssm: Any
    ssm_stub: Stubber
    im: Any
    im_stub: Stubber
    topic: str
    queue: str

    def incidents(self, *, plan: str | None = None, topic: bool = True) -> Incidents:
        settings = IncidentSettings(
            region=REGION, topic_arn=self.topic if topic else None, response_plan_arn=plan
        )
        return Incidents(self.ssm, boto3.client("sns"), settings, incident_manager=self.im if plan else None)

    def messages(self) -> list[dict[str, Any]]:
        sqs = boto3.client("sqs")
        received = sqs.receive_message(QueueUrl=self.queue, MaxNumberOfMessages=10).get("Messages", [])
        return [json.loads(message["Body"]) for message in received]

    def expect_create(self, request: OpenRequest, ops_item_id: str = OPS_ITEM) -> None:
        self.ssm_stub.add_response(
            "create_ops_item",
            {"OpsItemId": ops_item_id},
            dict(incidents.ops_item_request(request)),
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


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    with mock_aws():
        topic = boto3.client("sns").create_topic(Name="hyperpod-ha")["TopicArn"]
        queue = subscribed_inbox(topic)
        ssm = boto3.client("ssm")
        im = boto3.client("ssm-incidents")
        with Stubber(ssm) as ssm_stub, Stubber(im) as im_stub:
            yield World(ssm, ssm_stub, im, im_stub, topic, queue)
            ssm_stub.assert_no_pending_responses()
            im_stub.assert_no_pending_responses()


def test_open_creates_the_ops_item_and_notifies_once(world: World) -> None:
    request = OpenRequest.from_event(_open_event())
    world.expect_create(request)
    world.expect_get(_item(execution=EXECUTION))
    world.expect_update(OPS_ITEM, _data(notified=EXECUTION))
    result = world.incidents().open(request)
    assert result.to_json() == {
        "ops_item_id": OPS_ITEM,
        "created": True,
        "incident_arn": None,
        "notified": True,
        "links": {
            "execution": f"https://us-west-2.console.aws.amazon.com/states/home?region=us-west-2"
            f"#/v2/executions/details/{EXECUTION}",
            "ops_item": f"https://us-west-2.console.aws.amazon.com/systems-manager/opsitems/{OPS_ITEM}?region=us-west-2",
            "incident": None,
        },
    }
    [message] = world.messages()
    assert message["Subject"] == "hyperpod-ha ml-cluster: DOWN - incident opened (sev 1)"
    assert "no controller answered scontrol ping" in message["Message"]


def test_retried_open_has_no_second_effect(world: World) -> None:
    request = OpenRequest.from_event(_open_event())
    # The first attempt did everything; its answer was lost. OpsCenter deduplicates quietly.
    world.expect_create(request)
    world.expect_get(_item(execution=EXECUTION, notified=EXECUTION, incident=INCIDENT))
    result = world.incidents(plan=PLAN).open(request)
    assert result.ops_item_id == OPS_ITEM
    assert result.created is True  # it is this execution's OpsItem: the same answer as the first time
    assert result.incident_arn == INCIDENT
    assert result.notified is True
    assert world.messages() == []  # no second message, no StartIncident, no update (Stubber: none queued)


def test_dedup_hit_by_exception_is_not_created_and_notifies_still_open(world: World) -> None:
    request = OpenRequest.from_event(_open_event())
    world.expect_duplicate("oi-00000000aaaa")
    world.expect_get(
        _item("oi-00000000aaaa", execution=OTHER_EXECUTION, notified=OTHER_EXECUTION), "oi-00000000aaaa"
    )
    world.expect_update("oi-00000000aaaa", _data(notified=EXECUTION))
    # A response plan is set, but the incident belongs to whoever opened the OpsItem: no StartIncident.
    result = world.incidents(plan=PLAN).open(request)
    assert (result.ops_item_id, result.created, result.incident_arn) == ("oi-00000000aaaa", False, None)
    [message] = world.messages()
    assert "incident still open" in message["Subject"]


def test_dedup_hit_by_quiet_return_is_not_created(world: World) -> None:
    request = OpenRequest.from_event(_open_event())
    world.expect_create(request, "oi-00000000bbbb")
    world.expect_get(
        _item("oi-00000000bbbb", execution=OTHER_EXECUTION, notified=OTHER_EXECUTION, incident=INCIDENT),
        "oi-00000000bbbb",
    )
    world.expect_update("oi-00000000bbbb", _data(notified=EXECUTION))
    result = world.incidents(plan=PLAN).open(request)
    assert (result.ops_item_id, result.created, result.incident_arn) == ("oi-00000000bbbb", False, INCIDENT)
    assert result.links.incident is not None
    assert len(world.messages()) == 1


def test_duplicate_without_an_id_finds_the_open_ops_item(world: World) -> None:
    request = OpenRequest.from_event(_open_event())
    world.expect_duplicate(None)
    world.expect_describe(
        [
            _summary("oi-00000000cccc", cluster="ml-cluster", kind="SPLIT_BRAIN"),
            _summary("oi-00000000dddd", cluster="ml-cluster", kind="DOWN"),
        ],
        ["Open", "InProgress"],
    )
    world.expect_get(_item("oi-00000000dddd", execution=OTHER_EXECUTION), "oi-00000000dddd")
    world.expect_update("oi-00000000dddd", _data(notified=EXECUTION))
    assert world.incidents().open(request).ops_item_id == "oi-00000000dddd"


def test_open_starts_one_incident_manager_incident_with_its_own_token(world: World) -> None:
    request = OpenRequest.from_event(_open_event())
    world.expect_create(request)
    world.expect_get(_item(execution=EXECUTION))
    world.im_stub.add_response(
        "start_incident",
        {"incidentRecordArn": INCIDENT},
        {
            "responsePlanArn": PLAN,
            "clientToken": incidents.incident_client_token(EXECUTION, "DOWN"),
            "title": "HyperPod cluster ml-cluster: no Slurm controller is active (DOWN)",
            "impact": 1,
            "triggerDetails": {
                "source": "hyperpod-ha",
                "timestamp": ANY,
                "rawData": ANY,
                "triggerArn": EXECUTION,
            },
            "relatedItems": ANY,
        },
    )
    world.expect_update(OPS_ITEM, {**_data(incident=INCIDENT), **_data(notified=EXECUTION)})
    result = world.incidents(plan=PLAN).open(request)
    assert result.incident_arn == INCIDENT
    assert (
        result.links.incident
        == "https://us-west-2.console.aws.amazon.com/systems-manager/incidents/home?region=us-west-2"
    )
    [message] = world.messages()
    assert INCIDENT in message["Message"]


def test_incident_manager_failure_is_reported_and_the_ops_item_stands(world: World) -> None:
    request = OpenRequest.from_event(_open_event())
    world.expect_create(request)
    world.expect_get(_item(execution=EXECUTION))
    world.im_stub.add_client_error(
        "start_incident", service_error_code="AccessDeniedException", http_status_code=403
    )
    world.expect_update(OPS_ITEM, _data(notified=EXECUTION))
    result = world.incidents(plan=PLAN).open(request)
    assert result.incident_arn is None
    assert result.incident_error == "StartIncident failed: AccessDeniedException"
    assert result.to_json()["incident_error"] == "StartIncident failed: AccessDeniedException"
    assert len(world.messages()) == 1


def test_ops_center_refusal_is_a_typed_failure(world: World) -> None:
    world.ssm_stub.add_client_error("create_ops_item", service_error_code="OpsItemLimitExceededException")
    with pytest.raises(IncidentFailed, match="CreateOpsItem failed: OpsItemLimitExceededException"):
        world.incidents().open(OpenRequest.from_event(_open_event()))
    assert world.messages() == []


def test_open_without_a_topic_reports_not_notified(world: World) -> None:
    request = OpenRequest.from_event(_open_event())
    world.expect_create(request)
    world.expect_get(_item(execution=EXECUTION))
    result = world.incidents(topic=False).open(request)
    assert result.notified is False


# --- resolve ---


def _resolve(**changes: Any) -> ResolveRequest:
    event = {"cluster": "ml-cluster", "verdict": "HEALTHY", "execution_id": EXECUTION, **changes}
    return ResolveRequest.from_event(event)


def test_resolve_closes_our_open_items_and_says_recovered_once(world: World) -> None:
    world.expect_describe([], ["Resolved"], **{RESOLVED_BY_KEY: EXECUTION})
    world.expect_describe(
        [
            _summary("oi-000000000001", cluster="ml-cluster", kind="DOWN"),
            _summary("oi-000000000002", cluster="ml-cluster", kind="rollout-failed"),
            _summary("oi-000000000003", source="someone-else", cluster="ml-cluster", kind="DOWN"),
            _summary("oi-000000000004", cluster="other-cluster", kind="DOWN"),
        ],
        ["Open", "InProgress"],
    )
    world.expect_update(
        "oi-000000000001",
        {
            RESOLVED_BY_KEY: {"Type": "SearchableString", "Value": EXECUTION},
            incidents.RESOLUTION_KEY: {"Type": "String", "Value": ANY},
        },
        Status="Resolved",
    )
    world.expect_update("oi-000000000001", _data(recovery_notified=EXECUTION))
    result = world.incidents().resolve(_resolve())
    assert result.to_json() == {"resolved": ["oi-000000000001"], "notified": True, "message": "recovered"}
    [message] = world.messages()
    assert message["Subject"] == "hyperpod-ha ml-cluster: recovered (HEALTHY)"
    assert "oi-000000000001" in message["Message"]


def test_retried_resolve_has_no_second_effect(world: World) -> None:
    done = _summary(
        "oi-000000000001",
        status="Resolved",
        cluster="ml-cluster",
        kind="DOWN",
        resolved_by=EXECUTION,
        recovery_notified=EXECUTION,
    )
    world.expect_describe([done], ["Resolved"], **{RESOLVED_BY_KEY: EXECUTION})
    world.expect_describe([], ["Open", "InProgress"])
    verified_calls: list[ResolveRequest] = []

    def announce(request: ResolveRequest) -> bool:
        verified_calls.append(request)
        return True

    result = world.incidents().resolve(_resolve(), announce)
    assert result.to_json() == {"resolved": ["oi-000000000001"], "notified": True, "message": "recovered"}
    assert world.messages() == []
    assert verified_calls == []


def test_resolve_retried_after_a_lost_message_sends_it(world: World) -> None:
    half_done = _summary(
        "oi-000000000001", status="Resolved", cluster="ml-cluster", kind="DOWN", resolved_by=EXECUTION
    )
    world.expect_describe([half_done], ["Resolved"], **{RESOLVED_BY_KEY: EXECUTION})
    world.expect_describe([], ["Open", "InProgress"])
    world.expect_update("oi-000000000001", _data(recovery_notified=EXECUTION))
    result = world.incidents().resolve(_resolve())
    assert result.message == "recovered"
    assert len(world.messages()) == 1


def test_resolve_with_nothing_open_says_verified(world: World) -> None:
    world.expect_describe([], ["Resolved"], **{RESOLVED_BY_KEY: EXECUTION})
    world.expect_describe([], ["Open", "InProgress"])
    result = world.incidents().resolve(_resolve(verdict="FAILED_OVER"))
    assert result.to_json() == {"resolved": [], "notified": True, "message": "verified"}
    [message] = world.messages()
    assert message["Subject"] == "hyperpod-ha ml-cluster: verified (FAILED_OVER)"


def test_resolve_of_a_rollout_failure_only_when_named(world: World) -> None:
    world.expect_describe([], ["Resolved"], **{RESOLVED_BY_KEY: EXECUTION})
    world.expect_describe(
        [
            _summary("oi-000000000001", cluster="ml-cluster", kind="DOWN"),
            _summary("oi-000000000002", cluster="ml-cluster", kind="rollout-failed"),
        ],
        ["Open", "InProgress"],
    )
    world.expect_update("oi-000000000002", ANY, Status="Resolved")
    world.expect_update("oi-000000000002", _data(recovery_notified=EXECUTION))
    result = world.incidents().resolve(_resolve(kinds=["rollout-failed"]))
    assert result.resolved == ("oi-000000000002",)


@pytest.mark.parametrize("text", ["x:" * 50_000, "c" * 200_000, "a=b " * 30_000, 'password="' * 20_000])
def test_scrubbing_huge_output_stays_linear(text: str) -> None:
    # A quadratic scan would hang here (each of these took minutes with a naive pattern).
    scrubbed = incidents.scrub_text(text)
    assert len(scrubbed) <= len(text) + len(incidents.REDACTED) * 40_000
