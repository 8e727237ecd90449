"""The reboot of one controller's node (``reboot-node``, ``RestoreRedundancy=all`` only):
SageMaker's ``BatchRebootClusterNodes`` for that one instance, and the same command for an
operator. HyperPod reboots the instance (EC2 ``RebootInstances``, a clean shutdown first); the
state machine then waits, checks the node and starts slurmctld on it as on a standby."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from botocore.exceptions import ClientError

from hyperpod_ha.aws_errors import error_code
from hyperpod_ha.restore.errors import RestoreCommandFailed

if TYPE_CHECKING:
    from mypy_boto3_sagemaker import SageMakerClient

_MESSAGE_LIMIT: Final = 300


def reboot_command(cluster: str, instance_id: str) -> str:
    """What an operator runs for the same action."""
    return (
        f"aws sagemaker batch-reboot-cluster-nodes --cluster-name {shlex.quote(cluster)} "
        f"--node-ids {shlex.quote(instance_id)}"
    )


def reboot_node(sagemaker: SageMakerClient, cluster: str, instance_id: str) -> dict[str, Any]:
    """Ask HyperPod to reboot ``instance_id``: ``{"rebooting": instance_id}``, or
    :class:`RestoreCommandFailed` naming why (the node's ``Failed`` entry or the API's error)."""
    # The operation is recent: the Lambda runtime's boto3 (the layer ships none) may lack it.
    reboot = getattr(sagemaker, "batch_reboot_cluster_nodes", None)
    if reboot is None:
        raise RestoreCommandFailed(f"{instance_id}: this runtime's botocore has no BatchRebootClusterNodes")
    try:
        answer = reboot(ClusterName=cluster, NodeIds=[instance_id])
    except ClientError as error:
        message = str(error.response.get("Error", {}).get("Message", ""))[:_MESSAGE_LIMIT]
        raise RestoreCommandFailed(
            f"{instance_id}: BatchRebootClusterNodes refused: {error_code(error)}: {message}"
        ) from error
    for failed in answer.get("Failed") or []:
        if failed.get("NodeId") == instance_id:
            why = f"{failed.get('ErrorCode')}: {str(failed.get('Message', ''))[:_MESSAGE_LIMIT]}"
            raise RestoreCommandFailed(f"{instance_id}: HyperPod did not reboot the node: {why}")
    if instance_id not in (answer.get("Successful") or []):
        raise RestoreCommandFailed(f"{instance_id}: BatchRebootClusterNodes did not name the node")
    return {"rebooting": instance_id}


@dataclass(frozen=True)
class NodeReboots:
    """``BatchRebootClusterNodes`` on the stack's cluster, the client made on first use."""

    sagemaker: Callable[[], SageMakerClient]
    cluster: str

    def reboot(self, instance_id: str) -> dict[str, Any]:
        return reboot_node(self.sagemaker(), self.cluster, instance_id)
