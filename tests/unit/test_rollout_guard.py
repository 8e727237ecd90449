"""The UpdateClusterSoftware deployment configuration ``configure`` prints: valid for the API as
botocore's own model describes it, naming alarms the template creates."""

from __future__ import annotations

import json
import shlex

import botocore.session
import pytest
from botocore.exceptions import ParamValidationError
from botocore.validate import validate_parameters

from hyperpod_ha_cli.configure.rollout_guard import GUARDS, deployment_config, update_command
from tests.conftest import ROOT


def _input_shape():  # type: ignore[no-untyped-def]
    model = botocore.session.get_session().get_service_model("sagemaker")
    return model.operation_model("UpdateClusterSoftware").input_shape


def test_the_deployment_config_is_what_the_api_accepts() -> None:
    request = {
        "ClusterName": "ml-cluster",
        "InstanceGroups": [{"InstanceGroupName": "controller-machine"}],
        "DeploymentConfig": deployment_config("hyperpod-ha-ml-cluster"),
    }
    validate_parameters(request, _input_shape())
    # The validation is botocore's own: a required member missing is refused.
    broken = {**request, "DeploymentConfig": {**request["DeploymentConfig"], "RollingUpdatePolicy": {}}}
    with pytest.raises(ParamValidationError):
        validate_parameters(broken, _input_shape())


def test_the_guards_are_alarms_the_template_names() -> None:
    template = (ROOT / "template.yaml").read_text()
    for alarm in GUARDS:
        assert f"AlarmName: !Sub ${{AWS::StackName}}.{alarm}" in template
    names = [g["AlarmName"] for g in deployment_config("hp")["AutoRollbackConfiguration"]]
    assert names == [f"hp.{alarm}" for alarm in GUARDS]
    assert "hp.NoStandbyReadyAlarm" not in names  # a replaced controller leaves no standby for a while


def test_the_command_is_one_shell_line_with_the_config_as_json() -> None:
    words = shlex.split(update_command("ml-cluster", "us-west-2", "controller-machine", "hp"))
    assert words[:3] == ["aws", "sagemaker", "update-cluster-software"]
    config = json.loads(words[words.index("--deployment-config") + 1])
    assert config == deployment_config("hp")
    assert words[words.index("--instance-groups") + 1] == "InstanceGroupName=controller-machine"
