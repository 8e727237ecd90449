"""Which nodes HealthCheckFunction may probe: this stack's own controllers, whatever its
request says (issue 22). The request is a Map item of discovery's output; a forged one (a
direct invoke, a run started by hand with its own items) must not reach another cluster.

Every transport: the node's group is the stack's ControllerGroupName, and a HyperPod target
(``sagemaker-cluster:<cluster id>_<group>-<instance id>``) names that group and the node's own
instance id. With Session Manager (HyperPod's transport) the cluster id is this cluster's too,
read once per container with DescribeCluster of the stack's ClusterName. Run Command reaches
only instances tagged ``hyperpod-ha:cluster=<ClusterName>`` (IAM), so it needs no lookup.

The steps that act on a node (the restore's start and reboot, the drill's commands) go further
(issue 35): :func:`discovered_controller` takes the node from the step's own discovery of this
cluster, so its target is the one discovery made, whatever the request says."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NoReturn

from hyperpod_ha.commands import SESSION_MANAGER
from hyperpod_ha.controllers.errors import ControllerInputError
from hyperpod_ha.controllers.models import ClusterControllers, Controller
from hyperpod_ha.controllers.naming import cluster_id_from_arn, ssm_target
from hyperpod_ha.errors import ConfigurationError, InputRejected
from hyperpod_ha.observability import logger

if TYPE_CHECKING:
    from mypy_boto3_sagemaker import SageMakerClient

HYPERPOD_TARGET_PREFIX = "sagemaker-cluster:"


class ForeignControllerRejected(ControllerInputError):
    """The node handed to the health check is not a controller of this stack's cluster."""


@dataclass
class OwnControllers:
    """Checks that a node is one of this stack's controllers (the cluster id looked up once)."""

    cluster: str
    group: str
    transport: str
    sagemaker: SageMakerClient | None = None
    _cluster_id: str | None = field(default=None, init=False)

    def check(self, node: Controller) -> Controller:
        """``node`` when it is this stack's controller; :class:`ForeignControllerRejected` else."""
        if self.group and node.group != self.group:
            _refuse(node, "the node is not in this stack's controller group")
        hyperpod = node.target.startswith(HYPERPOD_TARGET_PREFIX)
        if hyperpod and not node.target.endswith(f"_{node.group}-{node.instance_id}"):
            _refuse(node, "the node's target names another group or instance")
        own_target = self.transport != SESSION_MANAGER or node.target == ssm_target(
            self.cluster_id(), node.group, node.instance_id
        )
        if not own_target:
            _refuse(node, "the node's target is not a controller of this stack's cluster")
        return node

    def cluster_id(self) -> str:
        if self._cluster_id is None:
            if self.sagemaker is None:
                raise ConfigurationError("the cluster's id cannot be looked up (no SageMaker client)")
            described = self.sagemaker.describe_cluster(ClusterName=self.cluster)
            self._cluster_id = cluster_id_from_arn(described["ClusterArn"])
        return self._cluster_id


def discovered_controller(
    found: ClusterControllers,
    instance_id: str,
    target: str | None = None,
    *,
    rejected: type[InputRejected] = ForeignControllerRejected,
) -> Controller:
    """The controller ``instance_id`` as this cluster's discovery ``found`` it: its target is
    ``ssm_target`` of this cluster's id, the controller group and the instance. ``rejected``
    (with a reason safe to log) for any other node (a worker, another cluster's), and when
    ``target`` is given and is not that controller's."""
    for controller in found.controllers:
        if controller.instance_id != instance_id:
            continue
        if target is not None and target != controller.target:
            logger.warning("target refused", extra={"instance_id": instance_id[:64], "target": target[:256]})
            raise rejected(
                f"{instance_id[:64]}: the target is not the one discovery found for that controller"
            )
        return controller
    logger.warning("controller refused", extra={"instance_id": instance_id[:64]})
    raise rejected(f"{instance_id[:64]} is not a controller of this stack's cluster (discovered now)")


def _refuse(node: Controller, reason: str) -> NoReturn:
    logger.warning("controller refused", extra={"reason": reason, "target": node.target[:256]})
    raise ForeignControllerRejected(reason)
