"""moto's own CloudFormation, as the embedded stack drives it, on small templates of our own:
the intrinsic functions and conditions template.yaml uses or may use (Fn::FindInMap from a
generated Mappings section, Fn::Sub, Fn::If, Conditions), and the refusals (a resource type
nothing would create, an unknown parameter, a substitution the definition lacks)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml

from hyperpod_ha.errors import InputRejected
from hyperpod_ha_dev.embedded import shims
from hyperpod_ha_dev.embedded.site import embedded_aws
from hyperpod_ha_dev.embedded.stack import EmbeddedStack, create_stack
from hyperpod_ha_stack.template import TemplateError
from tests.conftest import ROOT

TINY: dict[str, Any] = {
    "AWSTemplateFormatVersion": "2010-09-09",
    "Parameters": {
        "Stage": {"Type": "String", "Default": "blue", "AllowedValues": ["blue", "green"]},
        "Days": {"Type": "Number", "Default": 0},
        "Email": {"Type": "String", "Default": ""},
        "Groups": {"Type": "CommaDelimitedList", "Default": ""},
    },
    "Mappings": {"Scripts": {"probe": {"blue": "echo blue", "green": "echo green"}}},
    "Conditions": {
        # CloudFormation compares as text: a Number parameter 0 equals "0".
        "NoDays": {"Fn::Equals": [{"Ref": "Days"}, "0"]},
        "HasEmail": {"Fn::Not": [{"Fn::Equals": [{"Ref": "Email"}, ""]}]},
        # A list given or not, as template.yaml's HasRotationNetwork asks.
        "HasGroups": {"Fn::Not": [{"Fn::Equals": [{"Fn::Join": ["", {"Ref": "Groups"}]}, ""]}]},
        "GreenWithDays": {
            "Fn::And": [{"Fn::Equals": [{"Ref": "Stage"}, "green"]}, {"Fn::Not": [{"Condition": "NoDays"}]}]
        },
    },
    "Resources": {
        "Script": {
            "Type": "AWS::SSM::Document",
            "Properties": {
                "DocumentType": "Command",
                "Content": {
                    "schemaVersion": "2.2",
                    "description": {"Fn::Sub": "probe of ${AWS::StackName} in ${Stage}"},
                    "mainSteps": [
                        {
                            "action": "aws:runShellScript",
                            "name": "probe",
                            "inputs": {
                                "runCommand": [{"Fn::FindInMap": ["Scripts", "probe", {"Ref": "Stage"}]}]
                            },
                        }
                    ],
                },
            },
        },
        "Queue": {
            "Type": "AWS::SQS::Queue",
            "Properties": {
                "MessageRetentionPeriod": {"Fn::If": ["NoDays", 60, {"Ref": "AWS::NoValue"}]},
                "DelaySeconds": {"Fn::If": ["GreenWithDays", 5, 0]},
            },
        },
        "Topic": {"Type": "AWS::SNS::Topic", "Condition": "HasEmail"},
        "GroupTopic": {"Type": "AWS::SNS::Topic", "Condition": "HasGroups"},
    },
    "Outputs": {
        "DocumentName": {"Value": {"Ref": "Script"}},
        "QueueArn": {"Value": {"Fn::GetAtt": ["Queue", "Arn"]}},
        "Summary": {
            "Value": {"Fn::Sub": ["${Stage}/${Queue.QueueName}/${Extra}", {"Extra": {"Ref": "Days"}}]}
        },
    },
}


def tiny(tmp_path: Path, template: dict[str, Any] | None = None) -> Path:
    (tmp_path / "template.yaml").write_text(yaml.safe_dump(template or TINY))
    return tmp_path


@pytest.fixture
def aws() -> Iterator[None]:
    with embedded_aws():
        yield


def queue_attributes(stack: EmbeddedStack) -> dict[str, str]:
    answer = boto3.client("sqs").get_queue_attributes(QueueUrl=stack.ref("Queue"), AttributeNames=["All"])
    return dict(answer["Attributes"])


def test_find_in_map_sub_and_the_defaults(aws: None, tmp_path: Path) -> None:
    stack = create_stack(tiny(tmp_path), {}, name="tiny")
    content = json.loads(boto3.client("ssm").get_document(Name=stack.outputs["DocumentName"])["Content"])
    assert content["description"] == "probe of tiny in blue"
    assert content["mainSteps"][0]["inputs"]["runCommand"] == ["echo blue"]
    assert stack.outputs["Summary"] == "blue/tiny-Queue/0"
    assert stack.outputs["QueueArn"].endswith(":tiny-Queue")
    assert queue_attributes(stack)["MessageRetentionPeriod"] == "60"  # NoDays: a Number 0 equals "0"
    assert "Topic" not in stack.resources  # HasEmail is false
    assert "GroupTopic" not in stack.resources  # the empty list's default: HasGroups is false


def test_conditions_and_if_follow_the_parameters(aws: None, tmp_path: Path) -> None:
    stack = create_stack(
        tiny(tmp_path),
        {"Stage": "green", "Days": 3, "Email": "ops@example.com", "Groups": ["sg-1", "sg-2"]},
        name="tiny",
    )
    content = json.loads(boto3.client("ssm").get_document(Name=stack.ref("Script"))["Content"])
    assert content["mainSteps"][0]["inputs"]["runCommand"] == ["echo green"]
    attributes = queue_attributes(stack)
    assert attributes["MessageRetentionPeriod"] == "345600"  # AWS::NoValue: SQS's default stays
    assert attributes["DelaySeconds"] == "5"  # Fn::And of an Equals and another condition
    assert stack.resources["Topic"].type == "AWS::SNS::Topic"
    assert stack.resources["GroupTopic"].type == "AWS::SNS::Topic"
    assert stack.outputs["Summary"] == "green/tiny-Queue/3"


def test_a_resource_type_nothing_creates_is_refused_by_name(aws: None, tmp_path: Path) -> None:
    template = {**TINY, "Resources": {**TINY["Resources"], "Filter": {"Type": "AWS::Logs::MetricFilter"}}}
    with pytest.raises(TemplateError, match=r"AWS::Logs::MetricFilter \(Filter\)"):
        create_stack(tiny(tmp_path, template), {}, name="tiny")
    assert boto3.client("cloudformation").list_stacks()["StackSummaries"] == []  # nothing created


def test_parameters_are_checked_as_cloudformation_checks_them(aws: None, tmp_path: Path) -> None:
    with pytest.raises(TemplateError, match="Colour"):
        create_stack(tiny(tmp_path), {"Colour": "blue"}, name="tiny")
    with pytest.raises(InputRejected, match="is not one of"):
        create_stack(tiny(tmp_path), {"Stage": "red"}, name="tiny")


def test_a_definition_placeholder_without_its_substitution_is_refused(aws: None, tmp_path: Path) -> None:
    definition = {
        "StartAt": "Done",
        "States": {"Done": {"Type": "Pass", "Result": "${Missing}", "End": True}},
    }
    machine = {
        "Type": "AWS::StepFunctions::StateMachine",
        "Properties": {
            "DefinitionString": json.dumps(definition),
            "DefinitionSubstitutions": {"Present": "x"},
            "RoleArn": "arn:aws:iam::123456789012:role/machine",
        },
    }
    with pytest.raises(ValueError, match=r"\$\{Missing\}, which has no substitution"):
        create_stack(tiny(tmp_path, {"Resources": {"Machine": machine}}), {}, name="tiny")


def test_every_type_of_the_translated_template_is_created_by_moto_or_a_shim() -> None:
    from hyperpod_ha_dev.embedded.sam import translate

    translated = translate(ROOT / "template.yaml")
    assert shims.unsupported(translated["Resources"]) == []
    # The template's types today, and who creates each (a new type must be looked at here).
    own = {t for t in {r["Type"] for r in translated["Resources"].values()} if t not in shims.SHIMS}
    assert own - set(shims.NO_EFFECT) == {
        "AWS::CloudWatch::Dashboard",
        "AWS::DynamoDB::Table",
        "AWS::Events::Rule",
        "AWS::Lambda::Permission",
        "AWS::Logs::LogGroup",
        "AWS::SNS::Topic",
        "AWS::SQS::Queue",
    }, "moto's own models create these; the resource-by-resource test checks what they keep"
    assert all(reason for reason in shims.NO_EFFECT.values())
