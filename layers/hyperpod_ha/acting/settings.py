"""What a drill's and a restore's function both read from the template (``ActingSettings``),
and the kit's parts made from it the same way for both: the lease, this cluster's discovery
and the documents' transport."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Annotated

from hyperpod_ha.acting.execution_lease import ExecutionLease
from hyperpod_ha.acting.node_commands import NodeDocuments
from hyperpod_ha.commands import runner_for
from hyperpod_ha.controllers.models import ClusterControllers
from hyperpod_ha.controllers.settings import DEFAULT_TRANSPORT, ClusterName
from hyperpod_ha.environment import Settings, Text
from hyperpod_ha.errors import HyperpodHaError
from hyperpod_ha.lease import ExecutionKind, LeaseSeconds

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_sagemaker import SageMakerClient


@dataclass(frozen=True)
class ActingSettings(Settings):
    # The stack's cluster and controller group (the template's Globals): they act on no other.
    cluster: Annotated[str, ClusterName("CLUSTER_NAME")]
    controller_group: Annotated[str, Text("CONTROLLER_GROUP")]
    state_table: Annotated[str, Text("STATE_TABLE")]
    # Checked by the transports' registry (runner_for), which knows the names; the plan steps
    # refuse a transport that cannot run their Session documents.
    command_transport: Annotated[str, Text("COMMAND_TRANSPORT", DEFAULT_TRANSPORT)]
    lease_seconds: LeaseSeconds  # the same lease, and setting, as the verification runs'

    def lease(self, dynamodb: DynamoDBClient, kind: ExecutionKind) -> ExecutionLease:
        return ExecutionLease(dynamodb, self.state_table, self.lease_seconds, kind)

    def discovery(self, sagemaker: Callable[[], SageMakerClient]) -> Callable[[], ClusterControllers]:
        """This cluster's controllers, discovered at each call (the steps that act re-check there)."""
        from hyperpod_ha.controllers.discovery import discover_controllers

        return lambda: discover_controllers(sagemaker(), self.cluster, self.controller_group)

    def documents(
        self, deadline_seconds: float, failed: type[HyperpodHaError]
    ) -> Callable[[], NodeDocuments]:
        """The documents' transport, made on first use: most steps run no command."""
        return cache(lambda: NodeDocuments(runner_for(self.command_transport), deadline_seconds, failed))
