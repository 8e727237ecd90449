"""What a drill step that runs a command reads before it runs one: the cluster's lease (held by
this drill, or not) and this cluster's controllers as discovery finds them."""

from __future__ import annotations

from dataclasses import dataclass

from hyperpod_ha.acting.execution_lease import ExecutionLease
from hyperpod_ha.controllers.models import ClusterControllers, Controller
from hyperpod_ha.drill.models import ControllerRef
from hyperpod_ha.lease import Lease, lease_id_for_drill
from hyperpod_ha.own_executions import OwnExecutions
from tests.fakes.step_executions import DRILLS, own_executions

EXECUTION = "arn:aws:states:us-east-1:123456789012:execution:hyperpod-ha-failover-drill:d1"


@dataclass(frozen=True)
class Held(ExecutionLease):
    """The drill's lease as the steps read it: the lease of ``execution``'s drill, or none."""

    execution: str | None = None

    def holder(self, cluster: str) -> Lease | None:
        if self.execution is None:
            return None
        return Lease.for_execution("drill", lease_id_for_drill(self.execution), self.execution, 0, 3600)


def lease_held_by(execution: str | None) -> ExecutionLease:
    return Held(None, "state", 3600, "drill", execution=execution)  # type: ignore[arg-type]


def discovered(*refs: ControllerRef) -> ClusterControllers:
    """The cluster's controllers as discovery finds them: each ref's instance at its target."""
    controllers = tuple(
        Controller(ref.instance_id, "controller-machine", "Running", ref.private_ip, ref.hostname, ref.target)
        for ref in refs
    )
    return ClusterControllers(
        "c", "arn:aws:sagemaker:us-east-1:123456789012:cluster/abc", "abc", "InService", controllers
    )


def drills_running(*executions: str) -> OwnExecutions:
    """This stack's drill state machine with ``executions`` running (by default, EXECUTION)."""
    return own_executions(DRILLS, "drill", executions or (EXECUTION,))
