"""Issue 35, finding 2: the restore's steps that act (``act`` starts slurmctld, ``reboot`` calls
BatchRebootClusterNodes) decide again at the moment they act, from what they read themselves:
the request's cluster is the stack's, this restore holds the lease, the node is a controller of
this cluster discovered now (with the target discovery made), and for a reboot the plan's guards
and the hourly bound. A direct invoke naming anything else is refused and acts on nothing."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from hyperpod_ha.acting.execution_lease import ExecutionLease
from hyperpod_ha.acting.node_commands import NodeDocuments
from hyperpod_ha.acting.notice_topic import NoticeTopic
from hyperpod_ha.commands import CommandRequest, CommandResult
from hyperpod_ha.controllers.maintenance import Maintenance
from hyperpod_ha.controllers.models import ClusterControllers, Controller
from hyperpod_ha.lease import Lease, lease_id_for_restore
from hyperpod_ha.restore import steps
from hyperpod_ha.restore.context import RestoreContext
from hyperpod_ha.restore.errors import InvalidRestoreRequest, RestoreCommandFailed, RestoreStepRefused
from hyperpod_ha.restore.reboot import NodeReboots
from hyperpod_ha.restore.secret_versions import SecretRollouts
from hyperpod_ha.restore.settings import RestoreSettings
from hyperpod_ha.restore.state_items import RestoreItems
from hyperpod_ha.restore.verification import FollowingRuns
from hyperpod_ha.status_records import StatusRecords
from tests.fakes.canned_runner import CannedRunner
from tests.fakes.step_executions import RESTORES, own_executions
from tests.unit.restore.test_reboot import CTL2, MINUTES, NOW, PRIMARY, unreached_ctl2

EXECUTION = "arn:aws:states:us-east-1:123456789012:execution:hyperpod-ha-redundancy-restore:r1"
CLUSTER_ID = "hplab0000001"  # the id in the reports' targets
CTL1_ID = "i-0a1b2c3d4e5f60001"
CTL1 = Controller(
    CTL1_ID,
    "controller-machine",
    "Running",
    "10.214.0.11",
    "ip-10-214-0-11",
    f"sagemaker-cluster:{CLUSTER_ID}_controller-machine-{CTL1_ID}",
)
CTL2_NODE = Controller(
    CTL2, "controller-machine", "Running", "10.214.0.12", "ip-10-214-0-12", str(unreached_ctl2().target)
)
# ctl1 active, its ping showing ctl2's slurmctld down; ctl2 not reached through SSM.
REPORTS = [
    dataclasses.replace(PRIMARY.report(), instance_id=CTL1_ID, target=CTL1.target).to_json(),
    unreached_ctl2().to_json(),
]
WORKER = "i-0a1b2c3d4e5f60099"
RESTORED = "before=stopped\naction=started\nanswers_ping=yes\nHYPERPOD_HA_RESULT rc=0\n"


@dataclass(frozen=True)
class StoredLease(ExecutionLease):
    """The cluster's lease as stored: ``stored``."""

    stored: Lease | None = None

    def holder(self, cluster: str) -> Lease | None:
        return self.stored


@dataclass
class Cluster:
    """What the steps read and do: the lease, discovery, the hour's count, the reboots."""

    lease: Lease | None = field(
        default_factory=lambda: Lease.for_execution(
            "restore", lease_id_for_restore(EXECUTION), EXECUTION, int(NOW), 3600
        )
    )
    controllers: tuple[Controller, ...] = (CTL1, CTL2_NODE)
    cluster_status: str = "InService"
    counted: int = 0
    rebooted: list[str] = field(default_factory=list)
    restarted: list[tuple[str, int]] = field(default_factory=list)
    since: dict[str, int] = field(default_factory=lambda: {CTL2: int(NOW) - MINUTES * 60})
    runner: CannedRunner = field(
        default_factory=lambda: CannedRunner(result=CommandResult(RESTORED, "", 0, 1.0, "fake"))
    )
    silence: str | None = None  # the operator's silence in force, in words

    def found(self) -> ClusterControllers:
        return ClusterControllers(
            cluster="ml-cluster",
            cluster_arn=f"arn:aws:sagemaker:us-east-1:123456789012:cluster/{CLUSTER_ID}",
            cluster_id=CLUSTER_ID,
            cluster_status=self.cluster_status,
            controllers=self.controllers,
            maintenance=Maintenance(self.cluster_status),
        )

    def count_action(self, hour: int, at_most: int) -> int | None:
        if self.counted >= at_most:
            return None
        self.counted += 1
        return self.counted

    def reboot(self, instance_id: str) -> Mapping[str, Any]:
        self.rebooted.append(instance_id)
        return {"rebooting": instance_id}

    def unreachable_since(self) -> dict[str, int]:
        return self.since

    def restart_unreachable(self, instance_id: str, now: int) -> None:
        self.restarted.append((instance_id, now))

    def silenced(self) -> str | None:
        return self.silence

    def context(self, mode: str = "all", cluster_id: str = CLUSTER_ID) -> RestoreContext:
        def unused(*_: Any) -> Any:
            raise AssertionError("no secret: nothing rolls out")

        return RestoreContext(
            cluster="ml-cluster",
            settings=RestoreSettings(mode, unreachable_seconds=MINUTES * 60, cluster_id=cluster_id),
            document="hyperpod-ha-RestoreSlurmctldDocument",
            transport="session-manager",
            lease=StoredLease(None, "state", 3600, "restore", stored=self.lease),  # type: ignore[arg-type]
            controllers=self.found,
            commands=lambda: NodeDocuments(self.runner, 120, RestoreCommandFailed),
            items=cast(RestoreItems, self),
            rollouts=SecretRollouts(unused, None),
            status=cast(StatusRecords, None),
            topic=cast(NoticeTopic, None),  # an acting step does not notify
            runs=cast(FollowingRuns, None),  # nor verify
            executions=own_executions(RESTORES, "restore", (EXECUTION,)),
            reboots=cast(NodeReboots, self),
            clock=lambda: NOW,
        )


REQUEST = {"cluster": "ml-cluster", "mode": "all", "dry_run": False}


def reboot_item(**changes: Any) -> dict[str, Any]:
    item = {
        "kind": "reboot-node",
        "controller": "ctl2",
        "index": 1,
        "instance_id": CTL2,
        "target": CTL2_NODE.target,
        "why": "not reachable through SSM",
        "command": "aws sagemaker batch-reboot-cluster-nodes ...",
    }
    return {**item, **changes}


def reboot_event(**changes: Any) -> dict[str, Any]:
    event = {
        "action": "reboot",
        "request": REQUEST,
        "execution_id": EXECUTION,
        "item": reboot_item(),
        "reports": REPORTS,
    }
    return {**event, **changes}


def test_the_planned_reboot_is_done_counted_and_its_wait_started_again() -> None:
    cluster = Cluster()
    answer = steps.run_step(reboot_event(), cluster.context())
    assert (answer["rebooting"], answer["at"]) == (CTL2, int(NOW))
    assert (cluster.rebooted, cluster.counted, cluster.restarted) == ([CTL2], 1, [(CTL2, int(NOW))])


ACTIVE = reboot_item(controller="ctl1", index=0, instance_id=CTL1.instance_id, target=CTL1.target)


@pytest.mark.parametrize(
    ("event", "cluster", "reason"),
    [
        pytest.param(
            reboot_event(item=ACTIVE),
            Cluster(),
            "ctl1 .*: it is the active controller",
            id="the active controller",
        ),
        pytest.param(
            reboot_event(item=ACTIVE),
            Cluster(since={CTL1.instance_id: int(NOW) - 86_400}),
            "ctl1 .*: it is the active controller",
            id="the active controller, recorded unreachable",
        ),
        pytest.param(
            reboot_event(item=reboot_item(instance_id=WORKER, target=f"{CTL2_NODE.target[:-19]}-{WORKER}")),
            Cluster(),
            f"{WORKER} is not a controller of this stack's cluster",
            id="a worker",
        ),
        pytest.param(
            reboot_event(
                item=reboot_item(target=f"sagemaker-cluster:othercluster1_controller-machine-{CTL2}")
            ),
            Cluster(),
            "the target is not the one discovery found",
            id="another cluster's target",
        ),
        pytest.param(
            reboot_event(), Cluster(counted=2), "restoring stopped: 2 restore actions", id="hour spent"
        ),
        pytest.param(reboot_event(), Cluster(lease=None), "does not hold the cluster's lease", id="no lease"),
        pytest.param(
            reboot_event(execution_id=EXECUTION + "-forged"),
            Cluster(),
            "does not hold the cluster's lease",
            id="another execution",
        ),
        pytest.param(
            reboot_event(),
            Cluster(since={CTL2: int(NOW) - 60}),
            "RestoreUnreachableMinutes=15",
            id="unreachable too briefly",
        ),
        pytest.param(
            reboot_event(),
            Cluster(controllers=(CTL1, dataclasses.replace(CTL2_NODE, status="Pending"))),
            "is Pending, not Running",
            id="not running",
        ),
        pytest.param(
            reboot_event(),
            Cluster(cluster_status="SystemUpdating"),
            "HyperPod is updating the cluster",
            id="maintenance",
        ),
        pytest.param(
            reboot_event(request={**REQUEST, "mode": "standbys"}),
            Cluster(),
            "only a restore with mode all",
            id="mode standbys",
        ),
        pytest.param(
            reboot_event(request={**REQUEST, "dry_run": True}), Cluster(), "not a dry run", id="dry run"
        ),
        pytest.param(
            reboot_event(),
            Cluster(silence="silenced until 2026-12-06T18:00:00Z by arn:aws:iam::1:user/a: kernel"),
            "not restored: silenced until .*: kernel",
            id="silenced",
        ),
    ],
)
def test_a_reboot_outside_the_plan_is_refused_and_reboots_nothing(
    event: dict[str, Any], cluster: Cluster, reason: str
) -> None:
    with pytest.raises(RestoreStepRefused, match=reason):
        steps.run_step(event, cluster.context())
    assert cluster.rebooted == []
    assert cluster.restarted == []


def test_the_forged_active_controller_is_refused_even_four_times_in_a_row() -> None:
    # The review's case: three reboots of the active controller, then a worker.
    cluster = Cluster()
    for item in (ACTIVE, ACTIVE, ACTIVE, reboot_item(instance_id=WORKER)):
        with pytest.raises(RestoreStepRefused):
            steps.run_step(reboot_event(item=item), cluster.context())
    assert (cluster.rebooted, cluster.counted) == ([], 0)


def test_a_reboot_for_another_cluster_is_refused() -> None:
    cluster = Cluster()
    with pytest.raises(InvalidRestoreRequest, match="another cluster"):
        steps.run_step(reboot_event(request={**REQUEST, "cluster": "other-cluster"}), cluster.context())
    assert cluster.rebooted == []


def act_event(item: dict[str, Any] | None = None, **changes: Any) -> dict[str, Any]:
    standby = reboot_item(kind="start-slurmctld")
    return {
        "action": "act",
        "request": REQUEST,
        "execution_id": EXECUTION,
        "item": item or standby,
        **changes,
    }


def test_act_starts_slurmctld_on_the_discovered_target() -> None:
    cluster = Cluster()
    done = steps.run_step(act_event(), cluster.context("standbys"))
    assert done["started"] is True
    assert [(r.target, r.document) for r in cluster.runner.requests] == [
        (CTL2_NODE.target, "hyperpod-ha-RestoreSlurmctldDocument")
    ]


@pytest.mark.parametrize(
    ("event", "cluster", "error", "reason"),
    [
        pytest.param(
            act_event(reboot_item(kind="start-slurmctld", target=f"sagemaker-cluster:otherclust01_g-{CTL2}")),
            Cluster(),
            RestoreStepRefused,
            "the target is not the one discovery found",
            id="another cluster's node",
        ),
        pytest.param(
            act_event(reboot_item(kind="start-slurmctld", instance_id=WORKER, target=WORKER)),
            Cluster(),
            RestoreStepRefused,
            "is not a controller of this stack's cluster",
            id="not a controller",
        ),
        pytest.param(act_event(), Cluster(lease=None), RestoreStepRefused, "lease", id="no lease"),
        pytest.param(
            act_event(request={**REQUEST, "cluster": "other-cluster"}),
            Cluster(),
            InvalidRestoreRequest,
            "another cluster",
            id="another cluster's request",
        ),
        pytest.param(
            {k: v for k, v in act_event().items() if k != "request"},
            Cluster(),
            InvalidRestoreRequest,
            "not a JSON object",
            id="no request",
        ),
    ],
)
def test_act_outside_the_restore_is_refused_and_runs_nothing(
    event: dict[str, Any], cluster: Cluster, error: type[Exception], reason: str
) -> None:
    with pytest.raises(error, match=reason):
        steps.run_step(event, cluster.context("standbys"))
    assert cluster.runner.requests == []


def test_act_is_refused_when_a_silence_started_since_the_plan() -> None:
    cluster = Cluster(silence="silenced until 2026-12-06T18:00:00Z by arn:aws:iam::1:user/a: kernel")
    with pytest.raises(RestoreStepRefused, match="not restored: ctl2: silenced until"):
        steps.run_step(act_event(), cluster.context("standbys"))
    assert cluster.runner.requests == []


def test_act_is_refused_while_a_drill_holds_the_cluster() -> None:
    drill = Lease.for_execution("drill", "d" * 20, EXECUTION, int(NOW), 3600)
    cluster = Cluster(lease=drill)
    with pytest.raises(RestoreStepRefused, match="lease"):
        steps.run_step(act_event(), cluster.context("standbys"))
    assert cluster.runner.requests == []


def test_act_checks_every_request_it_runs() -> None:
    cluster = Cluster()
    steps.run_step(act_event(), cluster.context("standbys"))
    [request] = cluster.runner.requests
    assert isinstance(request, CommandRequest)
    assert request.parameters == {}  # the document takes none
