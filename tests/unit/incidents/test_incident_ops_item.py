"""The OpsItem an open request becomes: severity, dedup, fields, operational data and its bounds."""

from __future__ import annotations

import json

import pytest

from hyperpod_ha.incidents import InvalidIncidentRequest, OpenRequest
from hyperpod_ha.incidents.keys import (
    CLUSTER_KEY,
    EVIDENCE_PREFIX,
    EXECUTION_KEY,
    REASONS_KEY,
    SNAPSHOT_KEY,
    incident_client_token,
)
from hyperpod_ha.incidents.limits import (
    DESCRIPTION_LIMIT,
    KEY_LIMIT,
    MAX_EVIDENCE_ENTRIES,
    OPERATIONAL_DATA_VALUE_LIMIT,
    bounded,
)
from hyperpod_ha.incidents.ops_item import operational_data, ops_item_request, severity_for
from hyperpod_ha.request_fields import CUT_MARK
from tests.unit.incidents.cases.incident_world import (
    CLUSTER_ARN,
    EXECUTION,
    OPS_ITEM,
    OTHER_EXECUTION,
    RESERVED_PREFIXES,
    World,
    marked,
    open_event,
    ops_item,
)


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
        ("", "accounting-database-revert-failed", "2"),
        ("SOMETHING_NEW", "SOMETHING_NEW", "2"),
    ],
)
def test_severity_by_verdict_and_kind(verdict: str, kind: str, severity: str) -> None:
    assert severity_for(verdict, kind) == severity


def test_dedup_is_per_cluster_and_kind() -> None:
    request = OpenRequest.from_event(open_event(kind="verification-error"))
    data = operational_data(request)
    assert json.loads(data["/aws/dedup"]["Value"]) == {
        "dedupString": "hyperpod-ha:ml-cluster:verification-error"
    }
    assert data["/aws/dedup"]["Type"] == "SearchableString"
    # Without a kind, the verdict is the kind of problem.
    assert OpenRequest.from_event(open_event()).kind == "DOWN"


def test_ops_item_request_fields() -> None:
    request = ops_item_request(OpenRequest.from_event(open_event(verdict="SPLIT_BRAIN")))
    assert request["Source"] == "hyperpod-ha"
    assert request["Category"] == "Availability"
    assert request["Severity"] == "1"
    assert "ml-cluster" in request["Title"]
    assert "SPLIT_BRAIN" in request["Title"]
    assert "- no controller answered scontrol ping" in request["Description"]
    assert len(request["Description"]) <= DESCRIPTION_LIMIT
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
    request = OpenRequest.from_event(open_event(snapshot=snapshot))
    assert json.loads(operational_data(request)[SNAPSHOT_KEY]["Value"]) == snapshot
    world.expect_create(request)
    world.expect_get(ops_item(execution=EXECUTION))
    world.expect_update(OPS_ITEM, marked(notified=EXECUTION))
    world.incidents().open(request)
    [message] = world.messages()
    (line,) = [line for line in message["Message"].splitlines() if line.startswith("Snapshot:")]
    assert line.split(":", 1)[1].strip() == "backup backup-0123456789abcdef0 AVAILABLE (ok)"
    with pytest.raises(InvalidIncidentRequest, match="snapshot must be an object"):
        OpenRequest.from_event(open_event(snapshot="backup"))


def test_no_related_resource_without_a_cluster_arn() -> None:
    data = operational_data(OpenRequest.from_event(open_event(evidence={"reports": []})))
    assert "/aws/resources" not in data
    assert data[CLUSTER_KEY]["Value"] == "ml-cluster"


def test_operational_data_keys_are_allowed_and_values_bounded() -> None:
    huge = "é" * 40_000  # two bytes each: 80 KB
    evidence = {f"controller-{i}": {"stdout": huge} for i in range(40)}
    request = ops_item_request(
        OpenRequest.from_event(
            open_event(
                evidence=evidence,
                reasons=["r" * 30_000],
                error={"Error": "States.TaskFailed", "Cause": "c" * 50_000},
            )
        )
    )
    data = request["OperationalData"]
    for key, value in data.items():
        assert len(key) <= KEY_LIMIT
        assert key in ("/aws/dedup", "/aws/resources") or not key.lower().startswith(RESERVED_PREFIXES)
        assert len(value["Value"].encode()) <= OPERATIONAL_DATA_VALUE_LIMIT
        assert value["Value"].strip()
    truncated = data["hyperpod-ha:evidence:controller-0"]["Value"]
    assert "[truncated by hyperpod-ha:" in truncated
    assert "of 80014 bytes kept" in truncated  # {"stdout": "<80000 bytes>"}
    evidence_keys = [key for key in data if key.startswith(EVIDENCE_PREFIX)]
    assert len(evidence_keys) == MAX_EVIDENCE_ENTRIES + 1
    more = json.loads(data["hyperpod-ha:evidence:more"]["Value"])
    assert more["entries"] == [f"controller-{i}" for i in range(25, 40)]
    # Each reason is cut to an excerpt when the request is read (request_fields), before OpsCenter's bound.
    assert CUT_MARK in data[REASONS_KEY]["Value"]


def test_bounded_leaves_small_values_alone_and_cuts_on_a_character_boundary() -> None:
    assert bounded("small") == "small"
    cut = bounded("€" * 10_000, 1000)
    assert len(cut.encode()) <= 1000
    assert cut.startswith("€")
    cut.encode("utf-8")  # still valid text


def test_incident_client_token_is_stable_per_execution_and_kind() -> None:
    token = incident_client_token(EXECUTION, "DOWN")
    assert token == incident_client_token(EXECUTION, "DOWN")
    assert token != incident_client_token(OTHER_EXECUTION, "DOWN")
    assert token != incident_client_token(EXECUTION, "SPLIT_BRAIN")
    assert len(token) <= 128
