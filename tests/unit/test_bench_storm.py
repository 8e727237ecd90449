"""The benchmark's event storm: its event mixes, redeliveries, and the writes it attributes.

Nothing here is timed; the measurements themselves run with ``make bench``.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from typing import Any

import pytest

from bench import ROOT
from bench.stats import at_most
from bench.storm import node_writes_note, sns_writes_note
from bench.storm_plan import CONTROLLER, NODE_MIX, WORKERS, node_event_plan, sns_plan
from bench.storm_writes import tables_of

EVENTS = ROOT / "events"


def _event(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EVENTS / name).read_text())
    return loaded


# --- storm -----------------------------------------------------------------------------------


@pytest.fixture
def node_plan() -> list[Any]:
    return node_event_plan(
        4000,
        8,
        _event("eventbridge_node_health_worker.json"),
        _event("eventbridge_node_health_controller.json"),
    )


def test_the_node_event_mix_is_mostly_unhealthy_workers(node_plan: list[Any]) -> None:
    kinds = Counter(item.kind for item in node_plan)

    assert sum(kinds.values()) == 4000
    for kind, share in NODE_MIX:
        assert abs(kinds[kind] / 4000 - share) < 0.02, kind
    workers = {item.event["detail"]["InstanceId"] for item in node_plan if item.kind.startswith("worker")}
    assert workers == {f"i-0f0f0f0f0f0f{index:05d}" for index in range(1, WORKERS + 1)}
    controllers = [item for item in node_plan if item.kind == "controller-unhealthy"]
    assert {item.event["detail"]["InstanceId"] for item in controllers} == {CONTROLLER}
    healthy = [item for item in node_plan if item.kind == "worker-healthy"]
    assert {item.event["detail"]["HealthSummary"]["HealthStatus"] for item in healthy} == {"Healthy"}


def test_redeliveries_repeat_an_earlier_event_and_its_id(node_plan: list[Any]) -> None:
    seen: dict[str, dict[str, Any]] = {}
    for item in node_plan:
        if item.kind == "redelivery":
            assert seen[item.event["id"]] == item.event
            assert item.redelivery_of in {"worker-unhealthy", "worker-healthy", "controller-unhealthy"}
        else:
            assert item.event["id"] not in seen
            seen[item.event["id"]] = copy.deepcopy(dict(item.event))


def test_plans_are_the_same_for_the_same_seed() -> None:
    worker, controller = (
        _event("eventbridge_node_health_worker.json"),
        _event("eventbridge_node_health_controller.json"),
    )

    assert node_event_plan(300, 1, worker, controller) == node_event_plan(300, 1, worker, controller)
    assert node_event_plan(300, 1, worker, controller) != node_event_plan(300, 2, worker, controller)


def test_sns_redeliveries_keep_their_message_id() -> None:
    plan = sns_plan(500, 8, _event("sns_controller_on_primary.json"))

    fresh = [item.event["Records"][0]["Sns"]["MessageId"] for item in plan if item.kind == "notification"]
    again = [item.event["Records"][0]["Sns"]["MessageId"] for item in plan if item.kind == "redelivery"]
    assert len(fresh) == len(set(fresh))
    assert again
    assert set(again) <= set(fresh)
    messages = {item.event["Records"][0]["Sns"]["Message"] for item in plan}
    assert "Slurm Controller is ON, (10.1.0.12, Primary Node)" in messages


def test_writes_are_attributed_to_their_tables() -> None:
    assert tables_of("PutItem", {"TableName": "state"}) == ["state"]
    assert tables_of("BatchWriteItem", {"RequestItems": {"b": [], "a": []}}) == ["a", "b"]
    transaction = {"TransactItems": [{"Put": {"TableName": "x"}}, {"Update": {"TableName": "y"}}]}
    assert tables_of("TransactWriteItems", transaction) == ["x", "y"]


def _phase(
    calls_per_table: dict[str, dict[str, int]], events: int, per_kind: dict[str, Any]
) -> dict[str, Any]:
    calls = sum(sum(actions.values()) for actions in calls_per_table.values())
    return {
        "events": events,
        "dynamodb_writes": at_most(
            round(calls / events, 3), 1.0, calls=calls, per_table=calls_per_table, per_kind=per_kind
        ),
    }


def test_the_node_note_names_the_kinds_that_cost_more_than_one_write() -> None:
    report = _phase(
        {"StateTable": {"PutItem": 20, "UpdateItem": 980}},
        1000,
        {
            "worker-unhealthy": {"UpdateItem": 1.0},
            "controller-unhealthy": {"PutItem": 1.0, "UpdateItem": 0.95},
        },
    )

    note = node_writes_note(report)

    assert note.startswith("Met on average (1.0 write calls per event)")
    assert "controller-unhealthy 1.95" in note
    assert "worker-unhealthy" not in note
    assert (
        node_writes_note(_phase({"StateTable": {"UpdateItem": 10}}, 10, {"worker": {"UpdateItem": 1.0}}))
        == ""
    )


def test_the_sns_note_splits_idempotency_from_lease_writes() -> None:
    report = _phase(
        {"IdempotencyTable": {"PutItem": 160}, "StateTable": {"PutItem": 1, "UpdateItem": 19}}, 200, {}
    )

    note = sns_writes_note(report, "IdempotencyTable")

    assert note.startswith("Target met for SNS: of 0.9 write calls per notification, 0.80")
    assert "and 0.10 to the state table" in note
