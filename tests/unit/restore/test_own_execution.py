"""Issue 35, finding 2: the restore's steps that act on their request's content without the
lease's re-check (``begin`` takes the lease, ``plan`` counts the hour's actions, ``finish``
records and tells, ``verify`` starts a run) act only inside a running execution of this stack's
restore state machine, as Step Functions describes it; a direct invoke naming any other id is
``RestoreStepRefused`` and reads, writes and starts nothing. (``finish``: test_record.py.)"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from hyperpod_ha.lease import Lease
from hyperpod_ha.restore import steps
from hyperpod_ha.restore.context import RestoreContext
from hyperpod_ha.restore.errors import RestoreStepRefused
from hyperpod_ha.restore.verification import FollowingRuns
from hyperpod_ha.runs.settings import VerificationRunsSettings
from tests.fakes.step_executions import ACCOUNT_PREFIX, RESTORES, KnownExecutions, own_executions
from tests.unit.restore.test_acting_steps import (
    CTL1,
    CTL2_NODE,
    EXECUTION,
    REPORTS,
    REQUEST,
    Cluster,
    StoredLease,
)


@dataclass(frozen=True)
class FreeLease(StoredLease):
    """A free cluster: the lease is taken by whoever asks; who asked is kept."""

    taken: list[str] | None = None

    def take(self, cluster: str, execution_arn: str, handed: Any = None) -> Lease | None:
        assert self.taken is not None
        self.taken.append(execution_arn)
        return None


@dataclass
class Runs:
    """The verification runs the restore starts: each kept."""

    started: list[str]
    # begin reads the verification state machine (a run hands its lease over only from there).
    settings: VerificationRunsSettings = field(
        default_factory=lambda: VerificationRunsSettings(
            "state", f"{ACCOUNT_PREFIX}:stateMachine:verification"
        )
    )

    def start(self, execution_id: str, reason: str) -> dict[str, Any]:
        self.started.append(execution_id)
        return {"outcome": "started", "execution_arn": "run"}


@dataclass
class Hour(Cluster):
    """The cluster as plan reads it too: no action counted this hour yet."""

    def actions_this_hour(self, hour: int) -> int:
        return self.counted


def context(cluster: Hour, taken: list[str], started: list[str], *running: str) -> RestoreContext:
    restore = cluster.context()
    restore.lease = FreeLease(None, "state", 3600, "restore", taken=taken)  # type: ignore[arg-type]
    restore.runs = cast(FollowingRuns, Runs(started))
    restore.executions = own_executions(RESTORES, "restore", running)
    return restore


def events(execution_id: str) -> dict[str, dict[str, Any]]:
    discovered = {
        "controllers": [CTL1.to_json(), CTL2_NODE.to_json()],
        "maintenance": {"cluster_status": "InService"},
    }
    return {
        "begin": {"action": "begin", "request": REQUEST, "execution_id": execution_id},
        "plan": {
            "action": "plan",
            "request": REQUEST,
            "cluster": discovered,
            "reports": REPORTS,
            "execution_id": execution_id,
        },
        "verify": {"action": "verify", "request": REQUEST, "execution_id": execution_id},
    }


@pytest.mark.parametrize("action", ["begin", "plan", "verify"])
@pytest.mark.parametrize(
    ("running", "execution_id", "reason"),
    [
        ((), EXECUTION, "no restore execution of that name exists"),
        ((EXECUTION,), EXECUTION + "-forged", "no restore execution of that name exists"),
        ((EXECUTION,), "r1", "names no execution of this stack's restore state machine"),
    ],
    ids=["not running", "another name", "not an ARN"],
)
def test_a_step_outside_a_running_restore_acts_on_nothing(
    action: str, running: tuple[str, ...], execution_id: str, reason: str
) -> None:
    cluster, taken, started = Hour(), list[str](), list[str]()
    restore = context(cluster, taken, started, *running)
    with pytest.raises(RestoreStepRefused, match=reason):
        steps.run_step(events(execution_id)[action], restore)
    assert (taken, started, cluster.counted, cluster.rebooted) == ([], [], 0, [])


def test_an_ended_restore_is_refused_naming_its_status() -> None:
    cluster, taken = Hour(), list[str]()
    restore = context(cluster, taken, [])
    restore.executions = own_executions(RESTORES, "restore", ended={"r1": "TIMED_OUT"})
    with pytest.raises(RestoreStepRefused, match=r"not restored: the lease is not taken: .* is TIMED_OUT"):
        steps.run_step(events(EXECUTION)["begin"], restore)
    assert taken == []


def test_each_step_inside_its_running_restore_acts() -> None:
    cluster, taken, started = Hour(), list[str](), list[str]()
    restore = context(cluster, taken, started, EXECUTION)
    assert steps.run_step(events(EXECUTION)["begin"], restore)["taken"] is True
    planned = steps.run_step(events(EXECUTION)["plan"], restore)
    assert [a["kind"] for a in planned["actions"]] == ["reboot-node"]  # counted by the reboot itself
    steps.run_step(events(EXECUTION)["verify"], restore)
    assert (taken, started) == ([EXECUTION], [EXECUTION])
    assert cast(KnownExecutions, restore.executions.executions).asked == [EXECUTION] * 3
