"""Names of a HyperPod cluster and its nodes (pure): the cluster a request names, a node's
SSM target and Slurm node name."""

from __future__ import annotations

from collections.abc import Mapping

from hyperpod_ha.controllers.errors import ClusterRequestInvalid
from hyperpod_ha.request_fields import is_cluster_name


def requested_cluster(event: object, default: str) -> str:
    """The cluster a workflow request names (``{"cluster": ...}``), else ``default``."""
    if not isinstance(event, Mapping):
        raise ClusterRequestInvalid("the request is not a JSON object")
    cluster = event.get("cluster") or default
    if not is_cluster_name(cluster):
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
