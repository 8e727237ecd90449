"""The deployed stack that watches a cluster: its parameters and outputs, found by name and
checked against the cluster asked for (``runbook``, ``drill`` and ``status`` share it)."""

from __future__ import annotations

import boto3


class UnknownCluster(ValueError):
    """The stack does not watch the cluster named."""


def deployed_stack(stack_name: str) -> dict[str, str]:
    """The stack's parameters and outputs (outputs win), from CloudFormation."""
    stack = boto3.client("cloudformation").describe_stacks(StackName=stack_name)["Stacks"][0]
    parameters = {p["ParameterKey"]: p["ParameterValue"] for p in stack.get("Parameters", [])}
    return {**parameters, **{o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}}


def stack_for_cluster(stack_name: str, cluster: str) -> dict[str, str]:
    outputs = deployed_stack(stack_name)
    watched = outputs.get("ClusterName")
    if watched != cluster:
        raise UnknownCluster(f"stack {stack_name} watches cluster {watched!r}, not {cluster!r}")
    return outputs
