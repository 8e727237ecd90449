"""``hyperpod-ha invoke --stack-name``: a function's environment from a deployed stack."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from hyperpod_ha_dev.cli import deployed
from hyperpod_ha_stack.template import TemplateError
from tests.conftest import ROOT

STACK_ID = "arn:aws:cloudformation:eu-west-1:111122223333:stack/hyperpod-ha/0f1e2d3c"
RESOURCES = {
    "HyperpodHaLayer": (
        "AWS::Lambda::LayerVersion",
        "arn:aws:lambda:eu-west-1:111122223333:layer:HyperpodHaLayer:3",
    ),
    "StateTable": ("AWS::DynamoDB::Table", "hyperpod-ha-StateTable-ABC"),
    "IdempotencyTable": ("AWS::DynamoDB::Table", "hyperpod-ha-IdempotencyTable-DEF"),
    "FailoverVerificationStateMachine": (
        "AWS::StepFunctions::StateMachine",
        "arn:aws:states:eu-west-1:111122223333:stateMachine:Failover-XYZ",
    ),
    "ControllerStatusDeadLetterQueue": (
        "AWS::SQS::Queue",
        "https://sqs.eu-west-1.amazonaws.com/111122223333/hyperpod-ha-ControllerStatusDLQ",
    ),
    "ControllerStatusFunction": ("AWS::Lambda::Function", "hyperpod-ha-ControllerStatusFunction-GHI"),
    # A full accounting buffer's trigger opens its incident through IncidentFunction.
    "IncidentFunction": ("AWS::Lambda::Function", "hyperpod-ha-IncidentFunction-JKL"),
    "ControllerStatusLogGroup": ("AWS::Logs::LogGroup", "/aws/lambda/hyperpod-ha-ControllerStatusFunction"),
}


@pytest.fixture
def cloudformation(monkeypatch: pytest.MonkeyPatch) -> Stubber:
    client = boto3.client("cloudformation", region_name="eu-west-1")
    stubber = Stubber(client)
    monkeypatch.setattr(deployed.boto3, "client", lambda service, **_: client)
    stubber.add_response(
        "describe_stacks",
        {
            "Stacks": [
                {
                    "StackName": "hyperpod-ha",
                    "StackId": STACK_ID,
                    "CreationTime": "2026-11-29T00:00:00Z",
                    "StackStatus": "CREATE_COMPLETE",
                    "Parameters": [
                        {"ParameterKey": "ClusterName", "ParameterValue": "prod-cluster"},
                        {"ParameterKey": "SettleSeconds", "ParameterValue": "200"},
                    ],
                }
            ]
        },
        {"StackName": "hyperpod-ha"},
    )
    summaries: list[dict[str, Any]] = [
        {
            "LogicalResourceId": logical,
            "PhysicalResourceId": physical,
            "ResourceType": kind,
            "LastUpdatedTimestamp": "2026-11-29T00:00:00Z",
            "ResourceStatus": "CREATE_COMPLETE",
        }
        for logical, (kind, physical) in RESOURCES.items()
    ]
    stubber.add_response(
        "list_stack_resources", {"StackResourceSummaries": summaries}, {"StackName": "hyperpod-ha"}
    )
    stubber.activate()
    return stubber


def test_the_environment_comes_from_the_stacks_parameters_and_resources(cloudformation: Stubber) -> None:
    spec = deployed.deployed_function(ROOT, "ControllerStatusFunction", "hyperpod-ha")
    assert spec.name == "hyperpod-ha-ControllerStatusFunction-GHI"
    assert (
        spec.arn == "arn:aws:lambda:eu-west-1:111122223333:function:hyperpod-ha-ControllerStatusFunction-GHI"
    )
    assert spec.environment["CLUSTER_NAME"] == "prod-cluster"
    assert spec.environment["SETTLE_SECONDS"] == "200"
    assert spec.environment["STATE_TABLE"] == "hyperpod-ha-StateTable-ABC"
    assert spec.environment["STATE_MACHINE_ARN"] == RESOURCES["FailoverVerificationStateMachine"][1]
    assert spec.environment["REJECTED_QUEUE_URL"] == RESOURCES["ControllerStatusDeadLetterQueue"][1]
    assert spec.environment["INCIDENT_FUNCTION_ARN"] == (
        "arn:aws:lambda:eu-west-1:111122223333:function:hyperpod-ha-IncidentFunction-JKL"
    )
    cloudformation.assert_no_pending_responses()


def test_a_resource_missing_from_the_stack_is_a_clear_error(cloudformation: Stubber) -> None:
    # This stack lacks HyperPodEventFunction's topic and queue (and the function itself).
    with pytest.raises(TemplateError, match="is not a resource of stack hyperpod-ha"):
        deployed.deployed_function(ROOT, "HyperPodEventFunction", "hyperpod-ha")
