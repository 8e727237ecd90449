"""Issue 35, finding 2: a drill step that runs a command (the takeover and hand-back, the jobs,
the test job, the registration) runs it only for the drill that holds the cluster's lease, and
only at the target this cluster's discovery finds now for that controller: a direct invoke
naming another cluster's node, a worker or any other target runs nothing."""

from __future__ import annotations

from typing import Any, cast

import pytest

from hyperpod_ha.drill import steps
from hyperpod_ha.drill.models import DrillStepRefused, InvalidDrillRequest
from hyperpod_ha.drill.node import NodeOutput
from hyperpod_ha.drill.node_commands import NodeCommands
from tests.unit.drill.cases.own_cluster import EXECUTION, discovered, drills_running, lease_held_by
from tests.unit.drill.test_rules import CTL1, CTL2

FOREIGN = {**CTL2.to_json(), "target": "sagemaker-cluster:othercluster_controller-machine-i-2"}
WORKER = {**CTL2.to_json(), "instance_id": "i-9", "target": "sagemaker-cluster:abc_worker-group-1-i-9"}


class Commands:
    """``NodeCommands`` as the steps use it: each command and where it went."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def takeover(self, target: str, index: int) -> NodeOutput:
        self.sent.append((f"takeover {index}", target))
        return NodeOutput(0, {})

    def jobs(self, target: str, job_ids: list[str]) -> NodeOutput:
        self.sent.append(("jobs", target))
        return NodeOutput(0, {})

    def submit(self, target: str) -> NodeOutput:
        self.sent.append(("submit", target))
        return NodeOutput(0, {"submitted": "101"})

    def register(self, target: str) -> NodeOutput:
        self.sent.append(("register", target))
        return NodeOutput(0, {})


def context(commands: Commands, held_by: str | None = EXECUTION) -> steps.DrillContext:
    unused: Any = None  # these steps write no record, status or incident
    return steps.DrillContext(
        cluster="c",
        controllers=lambda: discovered(CTL1, CTL2),
        lease=lease_held_by(held_by),
        commands=lambda: cast(NodeCommands, commands),
        records=unused,
        status=unused,
        incidents=unused,
        transport="simulated",
        executions=drills_running(),
        clock=lambda: 40.0,
    )


def takeover(target: dict[str, Any] | None = None, **changes: Any) -> dict[str, Any]:
    event = {
        "action": "takeover",
        "phase": "takeover",
        "request": {"cluster": "c"},
        "execution_id": EXECUTION,
        "plan": {"primary": CTL1.to_json(), "target": target or CTL2.to_json()},
    }
    return {**event, **changes}


def test_the_takeover_goes_to_the_discovered_backup() -> None:
    commands = Commands()
    phase = steps.run_step(takeover(), context(commands))
    assert commands.sent == [("takeover 1", CTL2.target)]
    assert (phase["name"], phase["target"]) == ("takeover", "ctl2")


def test_the_hand_back_goes_to_the_discovered_primary() -> None:
    commands = Commands()
    steps.run_step(takeover(phase="hand-back"), context(commands))
    assert commands.sent == [("takeover 0", CTL1.target)]


@pytest.mark.parametrize(
    ("event", "held_by", "reason"),
    [
        (takeover(FOREIGN), EXECUTION, "the target is not the one discovery found"),
        (takeover(WORKER), EXECUTION, "i-9 is not a controller of this stack's cluster"),
        (takeover(), None, "does not hold the cluster's lease"),
        (takeover(), EXECUTION + "-other", "does not hold the cluster's lease"),
        (takeover(execution_id=EXECUTION + "-forged"), EXECUTION, "does not hold the cluster's lease"),
    ],
    ids=["another cluster's node", "a worker", "no lease", "another drill's lease", "forged execution"],
)
def test_a_takeover_outside_its_drill_is_refused_and_sends_nothing(
    event: dict[str, Any], held_by: str | None, reason: str
) -> None:
    commands = Commands()
    with pytest.raises(DrillStepRefused, match=reason):
        steps.run_step(event, context(commands, held_by))
    assert commands.sent == []


def test_a_takeover_for_another_cluster_is_refused() -> None:
    commands = Commands()
    with pytest.raises(InvalidDrillRequest, match="another cluster"):
        steps.run_step(takeover(request={"cluster": "other"}), context(commands))
    with pytest.raises(InvalidDrillRequest, match="another cluster"):
        steps.run_step(
            {"action": "begin", "request": {"cluster": "other"}, "execution_id": EXECUTION}, context(commands)
        )
    assert commands.sent == []


NODE_STEPS: list[dict[str, Any]] = [
    {"action": "jobs"},
    {"action": "check-jobs", "before": ["4"]},
    {"action": "submit"},
    {"action": "test-job", "test_job": {"id": "101", "submitted_at": 0, "checks": 0}},
]


@pytest.mark.parametrize("step", NODE_STEPS, ids=[s["action"] for s in NODE_STEPS])
def test_every_command_step_runs_on_a_discovered_controller_only(step: dict[str, Any]) -> None:
    base = {"request": {"cluster": "c"}, "execution_id": EXECUTION}
    commands = Commands()
    steps.run_step({**base, **step, "node": CTL2.to_json()}, context(commands))
    assert [target for _, target in commands.sent] == [CTL2.target]
    for forged, held_by in ((FOREIGN, EXECUTION), (WORKER, EXECUTION), (CTL2.to_json(), None)):
        with pytest.raises(DrillStepRefused):
            steps.run_step({**base, **step, "node": forged}, context(commands, held_by))
    assert len(commands.sent) == 1
