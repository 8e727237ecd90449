"""HyperPod's maintenance as discovery sees it: every update status of the cluster and of a
controller, statuses it does not know (kept, bounded, not maintenance), input that is not text."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hyperpod_ha.controllers.errors import MaintenanceInputError
from hyperpod_ha.controllers.maintenance import (
    STATUS_LIMIT,
    UPDATING_CLUSTER_STATUSES,
    UPDATING_NODE_STATUSES,
    Maintenance,
    StatusKind,
    cluster_status_kind,
    node_status_kind,
    of,
    status_text,
)
from hyperpod_ha.errors import InputRejected

CTL1, CTL2 = "i-0a1b2c3d4e5f60001", "i-0a1b2c3d4e5f60002"


@pytest.mark.parametrize("status", ["SystemUpdating", "Updating"])
def test_a_cluster_being_updated_is_under_maintenance(status: str) -> None:
    seen = of(status, [(CTL1, "Running"), (CTL2, "Running")])
    assert cluster_status_kind(status) is StatusKind.UPDATING
    assert seen.in_progress
    assert seen.describe() == f"maintenance in progress: cluster {status}"


@pytest.mark.parametrize(
    "status", ["SystemUpdating", "DeepHealthCheckInProgress", "AttachInProgress", "DetachInProgress"]
)
def test_a_controller_being_updated_is_maintenance_even_when_the_cluster_is_in_service(status: str) -> None:
    seen = of("InService", [(CTL1, status), (CTL2, "Running")])
    assert node_status_kind(status) is StatusKind.UPDATING
    assert seen.in_progress
    assert seen.controllers[0].instance_id == CTL1
    assert len(seen.controllers) == 1  # the Running controller is not under maintenance
    assert seen.describe() == f"maintenance in progress: cluster InService; controller {CTL1} {status}"


def test_the_named_statuses_are_exactly_the_update_ones() -> None:
    assert frozenset({"SystemUpdating", "Updating"}) == UPDATING_CLUSTER_STATUSES
    assert (
        frozenset({"SystemUpdating", "DeepHealthCheckInProgress", "AttachInProgress", "DetachInProgress"})
        == UPDATING_NODE_STATUSES
    )


@pytest.mark.parametrize("cluster", ["InService", "Creating", "Deleting", "Failed", "RollingBack", ""])
@pytest.mark.parametrize("node", ["Running", "Failure", "Pending", "ShuttingDown", "NotFound"])
def test_other_statuses_are_not_maintenance(cluster: str, node: str) -> None:
    seen = of(cluster, [(CTL1, node)])
    assert not seen.in_progress
    assert seen.controllers == ()
    assert seen.describe().startswith("no maintenance")


def test_an_unknown_status_is_kept_bounded_and_is_not_maintenance() -> None:
    long = "SomethingNew" * 20
    kept = status_text(long, "ClusterStatus")
    assert len(kept) == STATUS_LIMIT
    assert cluster_status_kind(kept) is StatusKind.OTHER
    assert node_status_kind("Patching") is StatusKind.OTHER
    assert not of(kept, [(CTL1, "Patching")]).in_progress


@pytest.mark.parametrize("value", [17, ["SystemUpdating"], {"Status": "x"}, True])
def test_a_status_that_is_not_text_is_refused_typed(value: object) -> None:
    with pytest.raises(MaintenanceInputError, match="ClusterStatus is not a string"):
        status_text(value, "ClusterStatus")
    assert issubclass(MaintenanceInputError, InputRejected)


def test_it_reads_back_from_the_workflow_and_derives_in_progress_itself() -> None:
    seen = of("InService", [(CTL1, "DeepHealthCheckInProgress")])
    assert Maintenance.from_json(seen.to_json()) == seen
    # A claim of maintenance without an update status is not believed (nor its absence).
    assert not Maintenance.from_json({"in_progress": True, "cluster_status": "InService"}).in_progress
    assert Maintenance.from_json({"in_progress": False, "cluster_status": "Updating"}).in_progress


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ("SystemUpdating", "not a JSON object"),
        ({"cluster_status": 3}, "cluster_status is not a string"),
        ({"cluster_status": "InService", "controllers": "i-1"}, "controllers is not a list"),
        ({"cluster_status": "InService", "controllers": ["i-1"]}, "not a JSON object"),
        ({"cluster_status": "InService", "controllers": [{"instance_id": 1}]}, "instance_id is not a string"),
    ],
)
def test_bad_workflow_input_is_refused_with_its_reason(data: Any, reason: str) -> None:
    with pytest.raises(MaintenanceInputError, match=reason):
        Maintenance.from_json(data)


@given(st.dictionaries(st.text(max_size=20), st.recursive(st.none() | st.text() | st.integers(), st.lists)))
def test_any_json_is_maintenance_or_a_typed_refusal(data: dict[str, Any]) -> None:
    try:
        seen = Maintenance.from_json(data)
    except MaintenanceInputError:
        return
    assert len(seen.cluster_status) <= STATUS_LIMIT
    assert all(len(node.status) <= STATUS_LIMIT for node in seen.controllers)


def test_many_controllers_under_update_are_bounded() -> None:
    seen = Maintenance.from_json(
        {
            "cluster_status": "SystemUpdating",
            "controllers": [{"instance_id": f"i-{n}", "status": "SystemUpdating"} for n in range(500)],
        }
    )
    assert len(seen.controllers) == 32
