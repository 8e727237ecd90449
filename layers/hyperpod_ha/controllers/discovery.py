"""Finding a cluster's controllers (the head nodes running slurmctld) from SageMaker's APIs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hyperpod_ha.controllers import maintenance
from hyperpod_ha.controllers.errors import ControllerGroupNotFound
from hyperpod_ha.controllers.models import ClusterControllers, Controller
from hyperpod_ha.controllers.naming import cluster_id_from_arn, slurm_node_name, ssm_target
from hyperpod_ha.controllers.orchestration import orchestration_of

if TYPE_CHECKING:
    from mypy_boto3_sagemaker import SageMakerClient


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
                    status=maintenance.status_text(
                        node.get("InstanceStatus", summary["InstanceStatus"]).get("Status"), "InstanceStatus"
                    ),
                    private_ip=private_ip,
                    hostname=node.get("PrivateDnsHostname") or slurm_node_name(private_ip),
                    target=ssm_target(cluster_id, group, instance_id),
                )
            )
    cluster_status = maintenance.status_text(described.get("ClusterStatus"), "ClusterStatus")
    found = tuple(sorted(controllers, key=lambda c: c.instance_id))
    return ClusterControllers(
        cluster=described["ClusterName"],
        cluster_arn=cluster_arn,
        cluster_id=cluster_id,
        cluster_status=cluster_status,
        controllers=found,
        accounting=orchestration_of(described),
        maintenance=maintenance.of(cluster_status, ((c.instance_id, c.status) for c in found)),
    )
