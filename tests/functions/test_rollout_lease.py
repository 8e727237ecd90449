"""The cluster's lease a roll-out holds (kind ``rollout``): never beside a drill, a restore or a
verification run, freed at its end whatever way it ends, and by its expiry when its invocation
died; a trigger that joined it gets its run afterwards (issue 35, item 7)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import boto3
import pytest

from hyperpod_ha import state_table
from hyperpod_ha.acting.execution_lease import ExecutionLease
from hyperpod_ha.commands import CommandRequest, CommandResult
from hyperpod_ha.lease import Lease, lease_id_for_rollout
from hyperpod_ha.rotation.errors import ClusterBusy, RolloutRefused
from hyperpod_ha.rotation.lease import SLACK_SECONDS, Invocation, RolloutLease
from hyperpod_ha.rotation.secret import TESTED
from tests.fakes.rotation_service import RotationService, stages, value
from tests.functions.rotation_rig import CONTEXT, NEW, OLD, Rig, discovered, rotation_rig


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Rig]:
    with rotation_rig(monkeypatch, tmp_path) as rig:
        yield rig


DRILL = "arn:aws:states:us-east-1:123456789012:execution:hyperpod-ha-FailoverDrillStateMachine:d1"
RESTORE = "arn:aws:states:us-east-1:123456789012:execution:hyperpod-ha-redundancy-restore:r1"


def held(app: Rig) -> Lease | None:
    return state_table.read_lease(boto3.client("dynamodb"), app.table, "lab")


def hold(app: Rig, lease: Lease) -> Lease:
    assert state_table.put_lease(boto3.client("dynamodb"), app.table, "lab", lease) is None
    return lease


def holders() -> dict[str, Callable[[], Lease]]:
    now = int(time.time())
    return {
        "drill": lambda: Lease.for_execution("drill", "d1", DRILL, now, 3600),
        "restore": lambda: Lease.for_execution("restore", "r1", RESTORE, now, 3600),
        "run": lambda: Lease.for_run("v1", "sns:m-1", "lab-v1", now, 3600),
    }


def pending_rotation(app: Rig, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    token = RotationService(monkeypatch, handler=None).start(app.arn)
    boto3.client("secretsmanager").put_secret_value(
        SecretId=app.arn,
        ClientRequestToken=token,
        SecretString=json.dumps(NEW, separators=(",", ":")),
        VersionStages=["AWSPENDING"],
    )
    # As testSecret leaves it: finishSecret promotes only a version whose test passed.
    boto3.client("secretsmanager").update_secret_version_stage(
        SecretId=app.arn, VersionStage=TESTED, MoveToVersionId=token
    )
    return {"Step": "finishSecret", "SecretId": app.arn, "ClientRequestToken": token}


def leases_seen_by_commands(app: Rig, monkeypatch: pytest.MonkeyPatch) -> list[Lease | None]:
    """The cluster's lease as each command of the roll-out found it."""
    seen: list[Lease | None] = []
    run = app.runner.run

    def looking(request: CommandRequest) -> CommandResult:
        seen.append(held(app))
        return run(request)

    monkeypatch.setattr(app.runner, "run", looking)
    return seen


@pytest.mark.parametrize("kind", ["drill", "restore"])
def test_the_rollout_is_refused_while_a_drill_or_a_restore_holds_the_cluster(app: Rig, kind: str) -> None:
    node = app.runner.add("a", OLD["username"], OLD["password"])
    discovered(app, [node.as_json()])
    holder = hold(app, holders()[kind]())

    with pytest.raises(RolloutRefused, match=f"a {kind} holds the cluster"):
        app.lambda_handler({"action": "rollout"}, CONTEXT)

    assert app.runner.requests == []  # slurmdbd.conf untouched, slurmdbd not restarted
    assert held(app) == holder  # the holder keeps the cluster


def test_the_rollout_waits_for_a_verification_run_then_rolls_out(app: Rig) -> None:
    node = app.runner.add("a", OLD["username"], OLD["password"])
    discovered(app, [node.as_json()])
    run = hold(app, holders()["run"]())

    with pytest.raises(ClusterBusy, match=r"a verification run holds the cluster .* waits for it"):
        app.lambda_handler({"action": "rollout"}, CONTEXT)
    assert app.runner.requests == []

    state_table.release_lease(boto3.client("dynamodb"), app.table, "lab", run.lease_id)  # the run ends
    assert app.lambda_handler({"action": "rollout"}, CONTEXT)["rollout"]["complete"]  # the retry
    assert held(app) is None


@pytest.mark.parametrize("kind", ["drill", "restore", "run"])
def test_finish_changes_nothing_while_the_cluster_is_held(
    app: Rig, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    node = app.runner.add("a", OLD["username"], OLD["password"])
    discovered(app, [node.as_json()])
    event = pending_rotation(app, monkeypatch)
    holder = hold(app, holders()[kind]())

    with pytest.raises(RolloutRefused if kind != "run" else ClusterBusy):
        app.lambda_handler(event, CONTEXT)

    # Secrets Manager retries the rotation: until then AWSCURRENT has not moved.
    assert stages(app.arn)[event["ClientRequestToken"]] == ["AWSPENDING", TESTED]
    assert value(app.arn) == OLD
    assert app.runner.requests == []
    assert held(app) == holder


def test_a_rollout_holds_the_cluster_under_its_own_kind_and_frees_it_at_the_end(
    app: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    nodes = [app.runner.add(name, OLD["username"], OLD["password"]) for name in ("a", "b")]
    discovered(app, [n.as_json() for n in nodes])
    seen = leases_seen_by_commands(app, monkeypatch)
    before = int(time.time())

    result = app.lambda_handler({"action": "rollout"}, CONTEXT)

    assert result["rollout"]["complete"]
    assert len(seen) == 2
    for lease in seen:
        assert lease is not None
        assert (lease.kind, lease.execution_name, lease.execution_arn) == (
            "rollout",
            CONTEXT.aws_request_id,
            CONTEXT.invoked_function_arn,
        )
        assert lease.lease_id == lease_id_for_rollout(CONTEXT.aws_request_id)
        # Held no longer than the invocation may run (its timeout) and the slack.
        assert lease.expires_at <= before + CONTEXT.timeout_seconds + SLACK_SECONDS + 1
    assert held(app) is None
    assert result["rollout"]["joined"] == {"count": 0}


def test_finish_holds_the_cluster_for_its_rotation_and_frees_it(
    app: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    node = app.runner.add("a", OLD["username"], OLD["password"])
    discovered(app, [node.as_json()])
    event = pending_rotation(app, monkeypatch)
    seen = leases_seen_by_commands(app, monkeypatch)

    assert app.lambda_handler(event, CONTEXT)["rollout"]["complete"]

    (lease,) = seen
    assert lease is not None
    assert (lease.kind, lease.lease_id) == ("rollout", lease_id_for_rollout(event["ClientRequestToken"]))
    assert held(app) is None


def test_a_rollout_that_breaks_midway_still_frees_the_cluster(
    app: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    node = app.runner.add("a", OLD["username"], OLD["password"])
    discovered(app, [node.as_json()])

    def broken(request: CommandRequest) -> CommandResult:
        raise RuntimeError("the transport broke")

    monkeypatch.setattr(app.runner, "run", broken)
    with pytest.raises(RuntimeError, match="the transport broke"):
        app.lambda_handler({"action": "rollout"}, CONTEXT)
    assert held(app) is None


def test_a_crashed_rollout_frees_the_cluster_once_its_invocation_must_have_ended(app: Rig) -> None:
    # A roll-out killed with its invocation (a timeout, a crash) never runs its release.
    ddb, now = boto3.client("dynamodb"), 1_800_000_000
    invocation = Invocation("arn:aws:lambda:us-east-1:123456789012:function:rotate", "req-1", 120.5)
    lease = RolloutLease(ddb, app.table, "lab", clock=lambda: now).take("req-1", invocation)
    assert lease.expires_at == now + 121 + SLACK_SECONDS

    drills = ExecutionLease(ddb, app.table, 3600, "drill", clock=lambda: lease.expires_at)
    assert drills.take("lab", DRILL) is not None  # still held at its last second
    drills = ExecutionLease(ddb, app.table, 3600, "drill", clock=lambda: lease.expires_at + 1)
    assert drills.take("lab", DRILL) is None  # then free
    assert held(app) is not None
    assert held(app).kind == "drill"  # type: ignore[union-attr]


def test_a_trigger_that_joined_the_rollout_gets_its_verification_after_it(
    app: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    node = app.runner.add("a", OLD["username"], OLD["password"])
    discovered(app, [node.as_json()])
    run = app.runner.run

    def meanwhile(request: CommandRequest) -> CommandResult:
        # A failover notification arrives during the roll-out: it joins the holder.
        holder = held(app)
        assert holder is not None
        assert holder.kind == "rollout"
        ddb = boto3.client("dynamodb")
        assert state_table.join_lease(ddb, app.table, "lab", holder.lease_id, "sns:m-9") == "joined"
        return run(request)

    monkeypatch.setattr(app.runner, "run", meanwhile)

    result = app.lambda_handler({"action": "rollout"}, CONTEXT)

    joined = result["rollout"]["joined"]
    assert joined["count"] == 1
    (execution,) = boto3.client("stepfunctions").list_executions(stateMachineArn=app.machine)["executions"]
    assert joined["verification"] == execution["executionArn"]
    run_input = json.loads(
        boto3.client("stepfunctions").describe_execution(executionArn=execution["executionArn"])["input"]
    )
    assert run_input["reason"] == "after a roll-out of the database secret: 1 trigger(s) joined it"
    after = held(app)
    assert after is not None
    assert after.kind == "run"  # the run holds the cluster now, as any run does
