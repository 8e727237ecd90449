"""Finding a cluster's controllers (the head nodes running slurmctld) from SageMaker's APIs."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mypy_boto3_sagemaker import SageMakerClient

RUNNING = "Running"


@dataclass(frozen=True)
class Controller:
    instance_id: str
    group: str
    status: str
    private_ip: str | None
    hostname: str | None
    target: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ClusterControllers:
    cluster: str
    cluster_arn: str
    cluster_id: str
    cluster_status: str
    controllers: tuple[Controller, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "cluster_arn": self.cluster_arn,
            "cluster_id": self.cluster_id,
            "cluster_status": self.cluster_status,
            "controllers": [controller.to_json() for controller in self.controllers],
        }


class ControllerGroupNotFound(LookupError):
    """The cluster has no instance group of the configured controller group's name."""


class ClusterRequestInvalid(ValueError):
    """The request names no cluster, or a string that cannot be a HyperPod cluster name."""


# SageMaker's ClusterName pattern (the template's ClusterName parameter has the same).
_CLUSTER_NAME = re.compile(r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}")


def requested_cluster(event: object, default: str) -> str:
    """The cluster a workflow request names (``{"cluster": ...}``), else ``default``."""
    if not isinstance(event, Mapping):
        raise ClusterRequestInvalid("the request is not a JSON object")
    cluster = event.get("cluster") or default
    if not isinstance(cluster, str) or not _CLUSTER_NAME.fullmatch(cluster):
        raise ClusterRequestInvalid("cluster is not a HyperPod cluster name")
    if cluster != default:
        # One stack watches one cluster: its IAM, topic and lease are that cluster's.
        raise ClusterRequestInvalid(f"this stack watches cluster {default}, not {cluster}")
    return cluster


def cluster_id_from_arn(cluster_arn: str) -> str:
    # arn:aws:sagemaker:<region>:<account>:cluster/<cluster-id>
    return cluster_arn.rsplit("/", 1)[-1]


def ssm_target(cluster_id: str, group: str, instance_id: str) -> str:
    return f"sagemaker-cluster:{cluster_id}_{group}-{instance_id}"


def slurm_node_name(private_ip: str | None) -> str | None:
    """HyperPod's Slurm node names are ``ip-10-1-2-3``, made from the private IP."""
    return f"ip-{private_ip.replace('.', '-')}" if private_ip else None


def discover_controllers(sagemaker: SageMakerClient, cluster: str, group: str) -> ClusterControllers:
    described = sagemaker.describe_cluster(ClusterName=cluster)
    groups = {g.get("InstanceGroupName") for g in described.get("InstanceGroups", [])}
    if group not in groups:
        raise ControllerGroupNotFound(f"cluster {cluster} has no instance group named {group!r}")
    cluster_arn = described["ClusterArn"]
    cluster_id = cluster_id_from_arn(cluster_arn)
    controllers: list[Controller] = []
    pages = sagemaker.get_paginator("list_cluster_nodes").paginate(
        ClusterName=cluster, InstanceGroupNameContains=group
    )
    for page in pages:
        for summary in page.get("ClusterNodeSummaries", []):
            # "Contains" also matches longer names (controller-machine-2): keep the exact group.
            if summary["InstanceGroupName"] != group:
                continue
            instance_id = summary["InstanceId"]
            node = sagemaker.describe_cluster_node(ClusterName=cluster, NodeId=instance_id)["NodeDetails"]
            private_ip = node.get("PrivatePrimaryIp")
            controllers.append(
                Controller(
                    instance_id=instance_id,
                    group=group,
                    status=node.get("InstanceStatus", summary["InstanceStatus"])["Status"],
                    private_ip=private_ip,
                    hostname=node.get("PrivateDnsHostname") or slurm_node_name(private_ip),
                    target=ssm_target(cluster_id, group, instance_id),
                )
            )
    return ClusterControllers(
        cluster=described["ClusterName"],
        cluster_arn=cluster_arn,
        cluster_id=cluster_id,
        cluster_status=described["ClusterStatus"],
        controllers=tuple(sorted(controllers, key=lambda c: c.instance_id)),
    )
