"""The deployed stack that watches a cluster: its parameters and outputs, found by name and
checked against the cluster asked for (``runbook``, ``drill`` and ``status`` share it)."""

from __future__ import annotations

import argparse

import boto3

from hyperpod_ha.request_fields import is_cluster_name


class UnknownCluster(ValueError):
    """The stack does not watch the cluster named."""


def cluster_name(value: str) -> str:
    """``--cluster``: a HyperPod cluster's name (the template's ClusterName pattern), else a
    usage error in one line, before anything is asked of AWS."""
    if not is_cluster_name(value):
        shown = value if len(value) <= 80 else value[:80] + "..."
        raise argparse.ArgumentTypeError(
            f"{shown!r} is not a HyperPod cluster name (1-63 letters, digits and hyphens, "
            "starting and ending with a letter or digit)"
        )
    return value


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
