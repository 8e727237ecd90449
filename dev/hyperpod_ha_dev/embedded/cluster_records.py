"""HyperPod's answers moto does not give, stood in for the embedded cluster: a cluster event's
record (``DescribeClusterEvent``), the cluster's ``Orchestrator`` (``DescribeCluster``'s
``Orchestrator.Slurm``: the config strategy, an external accounting database), the nodes'
addresses (``DescribeClusterNode``) and a node's reboot (``BatchRebootClusterNodes``, recorded
on the cluster: nothing reboots)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hyperpod_ha_dev.embedded.patching import Patch


def _cluster(backend: Any, name_or_arn: str) -> Any:
    name = name_or_arn.rsplit("/", 1)[-1]
    return backend.clusters.get(name)


def cluster_events() -> Patch:
    """DescribeClusterEvent from the records a test gave the cluster (``events`` by EventId)."""
    from moto.core.responses import ActionResult
    from moto.sagemaker.exceptions import ValidationError
    from moto.sagemaker.responses import SageMakerResponse

    def describe_cluster_event(self: Any) -> Any:
        cluster = _cluster(self.sagemaker_backend, self._get_param("ClusterName"))
        event_id = self._get_param("EventId")
        record = getattr(cluster, "events", {}).get(event_id) if cluster is not None else None
        if record is None:
            raise ValidationError(message=f"Could not find event {event_id}")
        return ActionResult({"EventDetails": record})

    return (SageMakerResponse, "describe_cluster_event", describe_cluster_event)


def node_reboots() -> Patch:
    """BatchRebootClusterNodes: each node of the cluster named is recorded in its ``reboots``
    (oldest first); a node it does not have is ``Failed`` with ``InstanceIdNotFound``."""
    from moto.core.responses import ActionResult
    from moto.sagemaker.exceptions import ValidationError
    from moto.sagemaker.responses import SageMakerResponse

    def batch_reboot_cluster_nodes(self: Any) -> Any:
        name = self._get_param("ClusterName")
        cluster = _cluster(self.sagemaker_backend, name)
        if cluster is None:
            raise ValidationError(message=f"Could not find cluster {name}")
        done, failed = [], []
        for node_id in self._get_param("NodeIds") or []:
            if node_id in cluster.nodes:
                done.append(node_id)
            else:
                failed.append(
                    {"NodeId": node_id, "ErrorCode": "InstanceIdNotFound", "Message": "no such node"}
                )
        cluster.reboots = [*getattr(cluster, "reboots", []), *done]
        return ActionResult({"Successful": done, "Failed": failed})

    return (SageMakerResponse, "batch_reboot_cluster_nodes", batch_reboot_cluster_nodes)


def rebooted(backend: Any, cluster_name: str) -> list[str]:
    """The nodes BatchRebootClusterNodes was asked to reboot, oldest first."""
    return list(getattr(backend.clusters[cluster_name], "reboots", []))


def orchestrator() -> Patch:
    """DescribeCluster with the ``Orchestrator`` a test gave the cluster, when it gave one."""
    from moto.sagemaker.models import Cluster

    original = Cluster.describe

    def describe(self: Any) -> dict[str, Any]:
        details = original(self)
        if getattr(self, "orchestrator", None):
            details["Orchestrator"] = self.orchestrator
        return details

    return (Cluster, "describe", describe)


def node_addresses() -> Patch:
    """moto's cluster nodes with the addresses HyperPod's DescribeClusterNode returns."""
    from moto.sagemaker.models import ClusterNode

    original = ClusterNode.describe

    def describe(self: Any) -> dict[str, Any]:
        details = original(self)
        if getattr(self, "private_ip", None):
            details["PrivatePrimaryIp"] = self.private_ip
            details["PrivateDnsHostname"] = self.hostname
        return details

    return (ClusterNode, "describe", describe)


def add_event(backend: Any, cluster_name: str, record: Mapping[str, Any]) -> None:
    cluster = backend.clusters[cluster_name]
    if not hasattr(cluster, "events"):
        cluster.events = {}
    cluster.events[record["EventId"]] = dict(record)


def set_orchestrator(backend: Any, cluster_name: str, value: Mapping[str, Any] | None) -> None:
    backend.clusters[cluster_name].orchestrator = dict(value) if value else None
