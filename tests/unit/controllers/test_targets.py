"""Issue 22: the health check probes only this stack's controllers, whatever its request says."""

from __future__ import annotations

import boto3
import pytest
from botocore.stub import Stubber

from hyperpod_ha.controllers.models import ClusterControllers, Controller
from hyperpod_ha.controllers.targets import ForeignControllerRejected, OwnControllers, discovered_controller
from hyperpod_ha.errors import InputRejected
from tests.unit.controllers.cases.probe_outputs import CONTROLLER_JSON

OWN_ID = "hplab0000001"  # the id in CONTROLLER_JSON's target
CLUSTER_ARN = f"arn:aws:sagemaker:us-east-1:123456789012:cluster/{OWN_ID}"


def own_controllers(transport: str = "session-manager", calls: int = 1) -> tuple[OwnControllers, Stubber]:
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    stub = Stubber(sagemaker)
    for _ in range(calls):
        stub.add_response(
            "describe_cluster",
            {
                "ClusterArn": CLUSTER_ARN,
                "ClusterName": "lab",
                "ClusterStatus": "InService",
                "InstanceGroups": [],
            },
            {"ClusterName": "lab"},
        )
    stub.activate()
    return OwnControllers("lab", "controller-machine", transport, sagemaker), stub


def node(**changes: str) -> Controller:
    return Controller.from_json({**CONTROLLER_JSON, **changes})


def test_a_discovered_controller_of_this_cluster_is_probed_and_the_id_is_read_once() -> None:
    own, stub = own_controllers()
    assert own.check(node()) == node()
    assert own.check(node()) == node()  # the cluster id is cached: one DescribeCluster
    stub.assert_no_pending_responses()


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        (
            {"target": "sagemaker-cluster:othercluster_controller-machine-i-0aaaaaaaaaaaaaaa1"},
            "not a controller",
        ),
        ({"target": "sagemaker-cluster:hplab0000001_worker-group-i-0aaaaaaaaaaaaaaa1"}, "another group"),
        (
            {"target": "sagemaker-cluster:hplab0000001_controller-machine-i-0bbbbbbbbbbbbbbb2"},
            "another group",
        ),
        ({"target": "i-0aaaaaaaaaaaaaaa1"}, "not a controller"),
        ({"group": "worker-group"}, "not in this stack's controller group"),
    ],
)
def test_any_other_target_is_refused_and_nothing_runs(changes: dict[str, str], reason: str) -> None:
    own, _ = own_controllers()
    with pytest.raises(ForeignControllerRejected, match=reason):
        own.check(node(**changes))


def test_without_session_manager_the_form_is_checked_without_a_lookup() -> None:
    own = OwnControllers("lab", "controller-machine", "run-command")
    assert own.check(node(target="i-0aaaaaaaaaaaaaaa1")).target == "i-0aaaaaaaaaaaaaaa1"
    with pytest.raises(ForeignControllerRejected, match="another group or instance"):
        own.check(node(target="sagemaker-cluster:x_controller-machine-i-0ffffffffffffffff"))
    with pytest.raises(ForeignControllerRejected, match="controller group"):
        own.check(node(group="other"))


# --- issue 35: the steps that act take their node from their own discovery -----------------


def found(*controllers: Controller) -> ClusterControllers:
    return ClusterControllers("lab", CLUSTER_ARN, OWN_ID, "InService", controllers)


def test_a_discovered_controller_is_taken_as_discovery_found_it() -> None:
    own = node()
    assert discovered_controller(found(own), own.instance_id) is own
    assert discovered_controller(found(own), own.instance_id, own.target) is own


@pytest.mark.parametrize(
    ("instance_id", "target", "reason"),
    [
        ("i-0f0f0f0f0f0f00001", None, "is not a controller of this stack's cluster"),
        (None, "sagemaker-cluster:othercluster_controller-machine-{}", "not the one discovery found"),
        (None, "{}", "not the one discovery found"),
    ],
    ids=["a worker", "another cluster's target", "a bare instance id"],
)
def test_any_other_node_or_target_is_refused_with_the_type_asked_for(
    instance_id: str | None, target: str | None, reason: str
) -> None:
    own = node()

    class Refused(InputRejected):
        pass

    with pytest.raises(Refused, match=reason):
        discovered_controller(
            found(own),
            instance_id or own.instance_id,
            target.format(own.instance_id) if target else None,
            rejected=Refused,
        )
    with pytest.raises(ForeignControllerRejected):
        discovered_controller(found(), own.instance_id)
