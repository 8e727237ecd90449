"""A template function, as SAM translates it, resolved against a deployed stack: its parameters
and physical resources."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import boto3

from hyperpod_ha_cli.samconfig import read_deploy_config
from hyperpod_ha_cli.stacks import Target, connect
from hyperpod_ha_dev.cfn import Context, Resolver, evaluate_conditions
from hyperpod_ha_dev.embedded.function_spec import function_spec, run_properties
from hyperpod_ha_dev.embedded.functions import FunctionSpec
from hyperpod_ha_dev.embedded.sam import translate
from hyperpod_ha_stack.template import TemplateError

# GetAtt <resource>.Arn from the physical id, by type (what the template's functions use).
_ARN_FORMATS = {
    "AWS::DynamoDB::Table": "arn:{partition}:dynamodb:{region}:{account}:table/{id}",
    "AWS::SQS::Queue": "arn:{partition}:sqs:{region}:{account}:{name}",
    "AWS::Serverless::Function": "arn:{partition}:lambda:{region}:{account}:function:{id}",
    "AWS::Lambda::Function": "arn:{partition}:lambda:{region}:{account}:function:{id}",
}


def offline_function(root: Path, logical_id: str) -> FunctionSpec:
    """The function with no stack to ask: references stay empty for ``--env-vars`` to fill."""
    template = translate(root / "template.yaml")
    values = {key: spec.get("Default", "") for key, spec in template.get("Parameters", {}).items()}
    pseudo = {
        "AWS::AccountId": "",
        "AWS::Region": "",
        "AWS::Partition": "aws",
        "AWS::StackName": "",
        "AWS::URLSuffix": "",
    }
    resolver = Resolver(
        template,
        Context(values, pseudo, lambda _: "", lambda _, __: "", evaluate_conditions(template, values)),
    )
    return function_spec(root, logical_id, logical_id, "", run_properties(template, resolver, logical_id))


def use_account(root: Path, region: str | None, profile: str | None) -> None:
    """The flags' region and profile, else samconfig.toml's default environment's, else the SDK's."""
    config = read_deploy_config(root)
    connect(Target("-", "-", region or config.region, profile or config.profile))


def deployed_function(root: Path, logical_id: str, stack_name: str | None) -> FunctionSpec:
    name = stack_name or read_deploy_config(root).stack_name or "hyperpod-ha"
    cloudformation = boto3.client("cloudformation")
    stack = cloudformation.describe_stacks(StackName=name)["Stacks"][0]
    parameters: dict[str, Any] = {
        p["ParameterKey"]: p.get("ResolvedValue", p["ParameterValue"]) for p in stack.get("Parameters", [])
    }
    physical: dict[str, tuple[str, str]] = {}
    for page in cloudformation.get_paginator("list_stack_resources").paginate(StackName=name):
        for resource in page["StackResourceSummaries"]:
            physical[resource["LogicalResourceId"]] = (
                resource["ResourceType"],
                resource.get("PhysicalResourceId", ""),
            )
    arn_parts = stack["StackId"].split(":")
    pseudo = {
        "AWS::AccountId": arn_parts[4],
        "AWS::Region": arn_parts[3],
        "AWS::Partition": arn_parts[1],
        "AWS::StackName": name,
        "AWS::URLSuffix": "amazonaws.com",
    }
    template = translate(root / "template.yaml")
    for key, spec in template.get("Parameters", {}).items():
        parameters.setdefault(key, spec.get("Default", ""))

    def ref(resource: str) -> str:
        if resource not in physical:
            raise TemplateError(f"{resource} is not a resource of stack {name}")
        return physical[resource][1]

    def get_att(resource: str, attribute: str) -> str:
        resource_type, physical_id = physical.get(resource, ("", ""))
        if attribute != "Arn" or resource_type not in _ARN_FORMATS:
            raise TemplateError(f"GetAtt {resource}.{attribute} cannot be derived from the deployed stack")
        return _ARN_FORMATS[resource_type].format(
            id=physical_id,
            name=physical_id.rsplit("/", 1)[-1],
            partition=pseudo["AWS::Partition"],
            region=pseudo["AWS::Region"],
            account=pseudo["AWS::AccountId"],
        )

    conditions = evaluate_conditions(template, parameters)
    resolver = Resolver(template, Context(parameters, pseudo, ref, get_att, conditions))
    properties = run_properties(template, resolver, logical_id)
    return function_spec(root, logical_id, ref(logical_id), get_att(logical_id, "Arn"), properties)
