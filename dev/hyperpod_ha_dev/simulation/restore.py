"""A restore of redundancy end to end on the embedded stack: the real restore state machine on
moto's interpreter, the real handlers, the restore's document run on simulated controllers.

The standby's slurmctld is down (``STANDBY_KILLED``) until the restore's document starts it
(``systemctl start slurmctld``, which the fake node records): then it logs the standby role
again (``STANDBY``). In ``RestartsAndDies`` it dies again after every start. In
``UnreachableUntilRebooted`` ctl2's node hangs (SSM cannot reach it, ctl1's ping sees it down)
until BatchRebootClusterNodes is asked to reboot it (the embedded cluster records it).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3

from hyperpod_ha import state_table
from hyperpod_ha.lease import Lease
from hyperpod_ha.slurm.triggers import SUBJECT as TRIGGER_SUBJECT
from hyperpod_ha_dev.embedded.site import rebooted_nodes
from hyperpod_ha_dev.simulation import scenarios as s
from hyperpod_ha_dev.simulation.cluster import SimulatedCluster, SimulatedController
from hyperpod_ha_dev.simulation.drill import DrillSimulatedCluster
from hyperpod_ha_dev.simulation.engine import EmbeddedRun, simulated_run
from hyperpod_ha_dev.simulation.fake_controller import ControllerState, FakeController

# ctl2's slurmctld killed: no process; the active ctl1 still writes the heartbeat.
STANDBY_KILLED = s.STANDBY_KILLED
FINISH_SECONDS = 180
# Fast restores: one second between checks. The definition is not touched.
RESTORE_INPUT = {"wait_seconds": 1, "max_checks": 4}


class RestoreSimulatedCluster(SimulatedCluster):
    """ctl1 active, ctl2's slurmctld down until the restore's document starts it."""

    dies_again = False

    def __init__(self, controllers: Any, captures: Path) -> None:
        super().__init__(controllers, captures)
        self.started: list[str] = []

    def state_for(self, controller: SimulatedController, check: int) -> ControllerState:
        if controller.identity == s.CTL2:
            return s.STANDBY if self.started and not self.dies_again else STANDBY_KILLED
        return s.PRIMARY

    def after_command(self, node: FakeController) -> None:
        requests = node.requests_file
        if not requests.exists():
            return
        for line in requests.read_text().splitlines():
            if line.split()[:1] == ["start"]:
                self.started.append(line)
        requests.unlink()


class RestartsAndDies(RestoreSimulatedCluster):
    """A slurmctld that dies again after every start."""

    dies_again = True


# ctl1 active; its ping sees ctl2's slurmctld down (ctl2's node hangs).
PRIMARY_BACKUP_DOWN = s.PRIMARY_BACKUP_DOWN


class UnreachableUntilRebooted(RestoreSimulatedCluster):
    """ctl2's node hangs: SSM cannot reach it until its reboot was asked for; then it is reached
    with slurmctld down until the restore's document starts it, then a standby again."""

    cluster_name = "ml-cluster"

    @property
    def rebooted(self) -> list[str]:
        return rebooted_nodes(self.cluster_name)

    def state_for(self, controller: SimulatedController, check: int) -> ControllerState:
        if controller.identity == s.CTL2:
            if not self.rebooted:
                return s.UNREACHABLE
            return s.STANDBY if self.started else STANDBY_KILLED
        return s.PRIMARY if self.started else PRIMARY_BACKUP_DOWN


class AfterFailover(DrillSimulatedCluster):
    """ctl1 killed, ctl2 took over (the ``failover`` scenario) until ctl1's slurmctld is started:
    then ctl1 takes control back, as in the drill's hand-back."""

    def __init__(self, controllers: Any, captures: Path) -> None:
        super().__init__(controllers, captures)
        self._phase, self._changed_at = "taken-over", float("-inf")

    @property
    def started(self) -> list[str]:
        return [what for _, what in self.events]


class AfterFailoverRegistrationLost(AfterFailover):
    """The hand-back leaves slurmdbd with no controller registered until a reconfigure (24.11)."""

    loses_registration = True


@dataclass
class RestoreResult:
    status: str
    output: dict[str, Any]
    states: list[str]
    started: list[str]
    executions: list[dict[str, Any]] = field(default_factory=list)
    rebooted: list[str] = field(default_factory=list)  # BatchRebootClusterNodes' nodes
    notices: list[str] = field(default_factory=list)  # the bodies on the notification topic
    ops_items: list[dict[str, Any]] = field(default_factory=list)  # the stack's, as GetOpsItem gives them


def run_restore(
    root: Path,
    request: dict[str, Any],
    cluster_type: type[SimulatedCluster] = RestoreSimulatedCluster,
    base: s.Scenario | None = None,
    before: Callable[[EmbeddedRun], None] | None = None,
) -> RestoreResult:
    """One restore execution started as ``hyperpod-ha restore start`` would, to its end
    (``before``: called with the embedded stack first, e.g. a watchdog tick)."""
    scenario = base or s.SCENARIOS["healthy"]
    with simulated_run(scenario, root, cluster_type) as run:
        from hyperpod_ha_dev.simulation.engine import _current

        if before is not None:
            before(run)
        sfn = boto3.client("stepfunctions")
        cluster = str(run.stack.parameters["ClusterName"])
        execution = sfn.start_execution(
            stateMachineArn=str(run.stack.outputs["RedundancyRestoreStateMachineArn"]),
            name="restore-test",
            input=json.dumps({"cluster": cluster, **RESTORE_INPUT, **request}),
        )["executionArn"]
        described = _wait(sfn, execution)
        history = sfn.get_execution_history(executionArn=execution, maxResults=1000)["events"]
        states = [e["stateEnteredEventDetails"]["name"] for e in history if "stateEnteredEventDetails" in e]
        simulated = _current.cluster
        started = list(getattr(simulated, "started", []))
        executions = [dict(e) for e in run.stack.executions()]
        run.stack.stop_running_executions()
        return RestoreResult(
            described["status"],
            json.loads(described.get("output") or "{}"),
            states,
            started,
            executions,
            rebooted_nodes(cluster),
            _notices(run.stack.ref("NotificationTopic")),
            _ops_items(),
        )


def _notices(topic_arn: str) -> list[str]:
    """What was published on the stack's notification topic (moto keeps it), oldest first."""
    from moto.sns.models import sns_backends

    _, _, _, region, account, _ = topic_arn.split(":")
    return [message for _, message, *_ in sns_backends[account][region].topics[topic_arn].sent_notifications]


def _ops_items() -> list[dict[str, Any]]:
    """The stack's OpsItems (the embedded OpsCenter), each whole: its operational data too."""
    ssm = boto3.client("ssm")
    found = ssm.describe_ops_items(
        OpsItemFilters=[{"Key": "Source", "Values": ["hyperpod-ha"], "Operator": "Equal"}]
    )["OpsItemSummaries"]
    return [dict(ssm.get_ops_item(OpsItemId=item["OpsItemId"])["OpsItem"]) for item in found]


def _wait(sfn: Any, execution: str) -> dict[str, Any]:
    deadline = time.monotonic() + FINISH_SECONDS
    while time.monotonic() < deadline:
        described: dict[str, Any] = sfn.describe_execution(executionArn=execution)
        if described["status"] != "RUNNING":
            return described
        time.sleep(0.2)
    raise TimeoutError(f"the restore did not finish within {FINISH_SECONDS} s")


def run_verification_with_restore(
    root: Path,
    mode: str,
    cluster_type: type[RestoreSimulatedCluster] = RestoreSimulatedCluster,
    lease_id: str = "",
    slurm_trigger: str | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """A verification run with ``restore_redundancy`` = ``mode`` (holding the cluster's lease
    ``lease_id``, as a trigger's run does, unless it is empty), then whatever it started, to the
    end: every execution of both state machines, oldest first, with its states and output.
    ``slurm_trigger``: the run is started instead by that Slurm trigger message, published on
    the failover topic as the triggers' program does (the stack's ``RestoreRedundancy`` = ``mode``)."""
    scenario = s.SCENARIOS["healthy"]
    if slurm_trigger is not None:
        scenario = dataclasses.replace(
            scenario, parameters={**scenario.parameters, "RestoreRedundancy": mode}
        )
    with simulated_run(scenario, root, cluster_type) as run:
        sfn = boto3.client("stepfunctions")
        cluster = str(run.stack.parameters["ClusterName"])
        if slurm_trigger is not None:
            run.notify(slurm_trigger, subject=TRIGGER_SUBJECT)
        else:
            if lease_id:
                lease = Lease.for_run(
                    lease_id, f"operator:{lease_id}", "verify-first", int(time.time()), 3600
                )
                state_table.put_lease(boto3.client("dynamodb"), run.stack.ref("StateTable"), cluster, lease)
            sfn.start_execution(
                stateMachineArn=str(run.stack.outputs["FailoverVerificationStateMachineArn"]),
                name="verify-first",
                input=json.dumps({"cluster": cluster, "restore_redundancy": mode, "lease_id": lease_id}),
            )
        found: dict[str, list[dict[str, Any]]] = {}
        deadline = time.monotonic() + FINISH_SECONDS
        while time.monotonic() < deadline:
            found = {
                output: run.stack.executions(output)
                for output in ("FailoverVerificationStateMachineArn", "RedundancyRestoreStateMachineArn")
            }
            every = [e for executions in found.values() for e in executions]
            settled = all(e["status"] != "RUNNING" for e in every)
            # A restore that acted starts one more verification: wait for it too.
            acted = any(e["status"] == "SUCCEEDED" for e in found["RedundancyRestoreStateMachineArn"])
            if settled and (not acted or len(found["FailoverVerificationStateMachineArn"]) > 1):
                break
            time.sleep(0.5)
        run.stack.stop_running_executions()
        for executions in found.values():
            executions.sort(key=lambda e: e["startDate"])
            for execution in executions:
                history = sfn.get_execution_history(executionArn=execution["executionArn"], maxResults=1000)
                execution["states"] = [
                    e["stateEnteredEventDetails"]["name"]
                    for e in history["events"]
                    if "stateEnteredEventDetails" in e
                ]
                described = sfn.describe_execution(executionArn=execution["executionArn"])
                execution["error"] = described.get("error")
                execution["output"] = json.loads(described.get("output") or "null")
                execution["input"] = json.loads(described.get("input") or "null")
        return found
