"""Finding a cluster's controllers: the names this module had, now in :mod:`hyperpod_ha.controllers`."""

from __future__ import annotations

from hyperpod_ha.controllers.discovery import discover_controllers
from hyperpod_ha.controllers.errors import ClusterRequestInvalid, ControllerGroupNotFound
from hyperpod_ha.controllers.models import RUNNING, ClusterControllers, Controller
from hyperpod_ha.controllers.naming import (
    cluster_id_from_arn,
    requested_cluster,
    slurm_node_name,
    ssm_target,
)

__all__ = [
    "RUNNING",
    "ClusterControllers",
    "ClusterRequestInvalid",
    "Controller",
    "ControllerGroupNotFound",
    "cluster_id_from_arn",
    "discover_controllers",
    "requested_cluster",
    "slurm_node_name",
    "ssm_target",
]
