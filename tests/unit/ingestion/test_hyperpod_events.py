from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hyperpod_ha.ingestion.hyperpod_events import (
    ClusterEvent,
    ClusterStateChange,
    EventRejected,
    NodeHealthEvent,
    parse_hyperpod_event,
)

EVENTS = Path(__file__).resolve().parents[3] / "events"


def sample(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EVENTS / name).read_text())
    return loaded


def test_node_health_event() -> None:
    event = parse_hyperpod_event(sample("eventbridge_node_health_controller.json"))
    assert isinstance(event, NodeHealthEvent)
    assert (event.cluster_name, event.instance_id, event.health_status, event.repair_action) == (
        "ml-cluster",
        "i-0a1b2c3d4e5f60001",
        "Unhealthy",
        "Replace",
    )
    assert not event.healthy


def test_cluster_state_change() -> None:
    event = parse_hyperpod_event(sample("eventbridge_cluster_state_failed.json"))
    assert isinstance(event, ClusterStateChange)
    assert event.alarming
    assert "Lifecycle script failed" in event.failure_message


def test_cluster_event_keeps_hyperpods_own_event_id() -> None:
    event = parse_hyperpod_event(sample("eventbridge_cluster_event_error.json"))
    assert isinstance(event, ClusterEvent)
    assert event.event_id == "evt-0123456789abcdef"
    assert (event.level, event.group, event.instance_id) == (
        "Error",
        "controller-machine",
        "i-0a1b2c3d4e5f60002",
    )


def test_unknown_health_values_are_accepted() -> None:
    raw = sample("eventbridge_node_health_worker.json")
    raw["detail"]["HealthSummary"].update({"HealthStatus": "Quarantined", "RepairAction": "Drain"})
    event = parse_hyperpod_event(raw)
    assert isinstance(event, NodeHealthEvent)
    assert (event.health_status, event.repair_action) == ("Quarantined", "Drain")


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda e: e.update(source="aws.ec2"), "source"),
        (lambda e: e.update({"detail-type": "EC2 Instance State-change Notification"}), "detail-type"),
        (lambda e: e.pop("detail"), "detail"),
        (lambda e: e["detail"].pop("HealthSummary"), "HealthSummary"),
        (lambda e: e["detail"].update(InstanceId=7), "InstanceId"),
        (lambda e: e["detail"]["HealthSummary"].update(HealthStatus=""), "HealthStatus"),
    ],
)
def test_malformed_events_are_rejected_with_a_reason(mutate: Any, reason: str) -> None:
    raw = sample("eventbridge_node_health_controller.json")
    mutate(raw)
    with pytest.raises(EventRejected, match=reason):
        parse_hyperpod_event(raw)


def test_the_malformed_sample_is_rejected() -> None:
    with pytest.raises(EventRejected, match="HealthSummary"):
        parse_hyperpod_event(sample("eventbridge_malformed.json"))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)


@given(
    st.fixed_dictionaries(
        {"source": st.sampled_from(["aws.sagemaker", "x"]), "id": json_values, "detail": json_values},
        optional={
            "detail-type": st.sampled_from(
                ["SageMaker HyperPod Cluster Node Health Event", "SageMaker HyperPod Cluster Event", "y"]
            )
        },
    )
)
def test_arbitrary_json_gives_a_result_or_a_typed_error(raw: dict[str, Any]) -> None:
    with contextlib.suppress(EventRejected):
        parse_hyperpod_event(raw)


def test_an_event_id_longer_than_any_eventbridge_id_is_rejected() -> None:
    from hyperpod_ha.ingestion.hyperpod_events import MAX_EVENT_ID_CHARS, EventRejected, parse_hyperpod_event

    event = {
        "id": "e" * (MAX_EVENT_ID_CHARS + 1),
        "source": "aws.sagemaker",
        "detail-type": "SageMaker HyperPod Cluster State Change",
        "detail": {"ClusterName": "ml-cluster", "ClusterStatus": "InService"},
    }
    with pytest.raises(EventRejected, match="longer than"):
        parse_hyperpod_event(event)
    event["id"] = "e" * MAX_EVENT_ID_CHARS
    assert parse_hyperpod_event(event).event_id == event["id"]


@pytest.mark.parametrize(
    ("time", "kept"), [("2026-11-29T23:30:41Z", "2026-11-29T23:30:41Z"), (1796067130.5, ""), (None, "")]
)
def test_the_event_time_is_kept_and_never_a_reason_to_reject(time: object, kept: str) -> None:
    raw = json.loads((EVENTS / "eventbridge_node_health_controller.json").read_text())
    raw["time"] = time
    parsed = parse_hyperpod_event(raw)
    assert parsed.time == kept
