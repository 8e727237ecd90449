"""Which instance group a cluster node is in, from SageMaker (health events do not say)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from hyperpod_ha.aws_errors import error_code

if TYPE_CHECKING:
    from mypy_boto3_sagemaker import SageMakerClient

# What DescribeClusterNode answers for a node that left the cluster.
_NODE_GONE = frozenset({"ResourceNotFound", "ValidationException"})


class InstanceGroups:
    """Lookups remembered for the container's life: a node does not change groups."""

    def __init__(self, sagemaker: SageMakerClient) -> None:
        self._sagemaker = sagemaker
        self._groups: dict[tuple[str, str], str | None] = {}

    def group_of(self, cluster: str, instance_id: str) -> str | None:
        """The node's instance group; ``None`` when the node is no longer in the cluster."""
        if (cluster, instance_id) not in self._groups:
            self._groups[cluster, instance_id] = self._describe(cluster, instance_id)
        return self._groups[cluster, instance_id]

    def _describe(self, cluster: str, instance_id: str) -> str | None:
        try:
            node = self._sagemaker.describe_cluster_node(ClusterName=cluster, NodeId=instance_id)
        except ClientError as error:
            if error_code(error) in _NODE_GONE:
                return None
            raise
        return node["NodeDetails"].get("InstanceGroupName")
