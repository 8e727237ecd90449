"""DiscoverControllersFunction's handler: on the embedded stack (moto's SageMaker), and its settings."""

from __future__ import annotations

import pytest

from hyperpod_ha.errors import ConfigurationError
from hyperpod_ha_dev.embedded.functions import FunctionError, LambdaContext, new_containers
from tests.conftest import Embedded, load_function_module

FUNCTION = "DiscoverControllersFunction"


def test_the_controllers_of_the_stack_s_cluster_and_no_other(embedded: Embedded) -> None:
    site = embedded.site
    found = embedded.stack.invoke(FUNCTION, {})
    cluster_id = site.cluster_arn.rsplit("/", 1)[-1]
    assert (found["cluster"], found["cluster_arn"], found["cluster_id"]) == (
        site.cluster_name,
        site.cluster_arn,
        cluster_id,
    )
    assert found["controllers"] == [
        {
            "instance_id": c.instance_id,
            "group": site.controller_group,
            "status": "Running",
            "private_ip": c.private_ip,
            "hostname": c.hostname,
            "target": f"sagemaker-cluster:{cluster_id}_{site.controller_group}-{c.instance_id}",
        }
        for c in sorted(site.controllers, key=lambda c: c.instance_id)
    ]
    assert embedded.stack.invoke(FUNCTION, {"cluster": site.cluster_name}) == found
    assert found["maintenance"] == {"in_progress": False, "cluster_status": "InService", "controllers": []}
    # HyperPod's platform update: the cluster and one controller say so (only controllers count).
    site.set_cluster_status("SystemUpdating")
    site.set_controller_status(site.controllers[1].instance_id, "DeepHealthCheckInProgress")
    assert embedded.stack.invoke(FUNCTION, {})["maintenance"] == {
        "in_progress": True,
        "cluster_status": "SystemUpdating",
        "controllers": [
            {"instance_id": site.controllers[1].instance_id, "status": "DeepHealthCheckInProgress"}
        ],
    }
    # One embedded stack for the refusals too: it takes seconds to make.
    with pytest.raises(FunctionError) as raised:
        embedded.stack.invoke(FUNCTION, {"cluster": "other-cluster"})
    assert raised.value.error_type == "ClusterRequestInvalid"
    embedded.stack.override_environment(FUNCTION, CONTROLLER_GROUP="no-such-group")
    new_containers()  # settings are read once per container
    with pytest.raises(FunctionError) as raised:
        embedded.stack.invoke(FUNCTION, {})
    assert raised.value.error_type == "ControllerGroupNotFound"


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({"CONTROLLER_GROUP": "controller-machine"}, "CLUSTER_NAME is not set"),
        ({"CLUSTER_NAME": "two words", "CONTROLLER_GROUP": "c"}, "CLUSTER_NAME is not a HyperPod cluster"),
    ],
)
def test_bad_settings_fail_the_first_invocation_whatever_the_event(
    monkeypatch: pytest.MonkeyPatch, variables: dict[str, str], message: str
) -> None:
    for name in ("CLUSTER_NAME", "CONTROLLER_GROUP"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    app = load_function_module("discover_controllers", fresh=True)
    context = LambdaContext(FUNCTION, "arn:aws:lambda:us-east-1:123456789012:function:d", 128, 30)
    with pytest.raises(ConfigurationError, match=message):
        app.lambda_handler({"cluster": ["not", "a", "name"]}, context)
