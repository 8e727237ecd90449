"""RotateDbSecretFunction on moto: the event kinds, finishSecret's roll-out, the roll-out action.

The database steps (setSecret, testSecret) against the real server are in
tests/real/test_rotation_mariadb.py; here the roll-out runs on controllers faked on this
machine (tests/fakes/rollout_nodes.py). The cluster's lease a roll-out holds:
tests/functions/test_rollout_lease.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from hyperpod_ha.rotation.errors import RotationRequestInvalid
from tests.fakes.rollout_nodes import RolloutRunner
from tests.fakes.rotation_service import RotationService, stages, value
from tests.functions.rotation_rig import CONTEXT, NEW, OLD, Rig, discovered, rotation_rig


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Rig]:
    with rotation_rig(monkeypatch, tmp_path) as rig:
        yield rig


def test_the_rollout_action_updates_the_given_controllers(app: Rig) -> None:
    runner: RolloutRunner = app.runner
    nodes = [runner.add(name, OLD["username"], OLD["password"]) for name in ("a", "b", "c")]
    discovered(app, [n.as_json() for n in nodes])

    # The request chooses among the discovered controllers (here two of three, by instance id).
    chosen = [{"instance_id": n.as_json()["instance_id"]} for n in nodes[:2]]
    result = app.lambda_handler({"action": "rollout", "controllers": chosen, "SecretId": app.arn}, CONTEXT)

    assert result["action"] == "rollout"
    assert result["secret_arn"] == app.arn
    assert result["rollout"]["complete"]
    assert [c["instance_id"] for c in result["rollout"]["controllers"]] == ["i-a", "i-b"]
    assert all(
        n.credentials() == {"storageuser": "admin", "storagepass": "Old-Password-1"} for n in nodes[:2]
    )
    assert all(n.restarts() == ["admin"] for n in nodes[:2])
    assert nodes[2].restarts() == []
    assert "Old-Password-1" not in json.dumps(result)


@pytest.mark.parametrize(
    "given",
    [
        [{"instance_id": "i-other"}],
        [{"instance_id": "i-a", "target": "sagemaker-cluster:othercluster_controller-machine-i-a"}],
        [{"target": "sagemaker-cluster:othercluster_controller-machine-i-a"}],
        ["i-a"],
    ],
)
def test_a_rollout_request_cannot_target_a_node_discovery_did_not_find(app: Rig, given: list[Any]) -> None:
    runner: RolloutRunner = app.runner
    node = runner.add("a", OLD["username"], OLD["password"])
    discovered(app, [node.as_json()])

    with pytest.raises(RotationRequestInvalid, match="not a discovered controller of this cluster"):
        app.lambda_handler({"action": "rollout", "controllers": given}, CONTEXT)
    assert node.restarts() == []


@pytest.mark.parametrize(
    "secret_id",
    [
        "arn:aws:secretsmanager:us-east-1:210987654321:secret:slurmdbd-AbCdEf",
        "arn:aws:secretsmanager:us-east-1:123456789012:secret:other-AbCdEf",
    ],
)
def test_a_request_for_another_secret_is_refused_and_changes_nothing(app: Rig, secret_id: str) -> None:
    runner: RolloutRunner = app.runner
    node = runner.add("a", OLD["username"], OLD["password"])
    discovered(app, [node.as_json()])
    for event in (
        {"action": "rollout", "SecretId": secret_id},
        {"Step": "createSecret", "SecretId": secret_id, "ClientRequestToken": "t-1"},
    ):
        with pytest.raises(RotationRequestInvalid, match="not this stack's database secret"):
            app.lambda_handler(event, CONTEXT)
    assert node.restarts() == []
    assert app.discovery_calls == []


def test_the_rollout_action_discovers_controllers_running_ones_first(
    app: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner: RolloutRunner = app.runner
    replaced = runner.add("replaced", OLD["username"], OLD["password"])
    replaced.unreachable = True
    healthy = runner.add("healthy", OLD["username"], OLD["password"])
    discovered(app, [{**replaced.as_json(), "status": "Pending"}, healthy.as_json()])

    result = app.lambda_handler({"action": "rollout", "SecretId": app.arn}, CONTEXT)

    assert app.discovery_calls == [("lab", "controller-machine")]
    outcomes = [(c["instance_id"], c["outcome"]) for c in result["rollout"]["controllers"]]
    assert outcomes == [("i-healthy", "updated"), ("i-replaced", "failed")]
    assert not result["rollout"]["complete"]


def test_the_rollout_action_waits_for_a_rotation_in_progress(
    app: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    RotationService(monkeypatch, handler=None).start(app.arn)
    runner: RolloutRunner = app.runner
    node = runner.add("a", OLD["username"], OLD["password"])
    with pytest.raises(RotationRequestInvalid, match=r"rotation .* is in progress"):
        app.lambda_handler({"action": "rollout", "controllers": [node.as_json()]}, CONTEXT)
    assert runner.requests == []


def pending_new_version(app: Rig, monkeypatch: pytest.MonkeyPatch) -> str:
    """A rotation started by Secrets Manager, its AWSPENDING version holding NEW."""
    token = RotationService(monkeypatch, handler=None).start(app.arn)
    boto3.client("secretsmanager").put_secret_value(
        SecretId=app.arn,
        ClientRequestToken=token,
        SecretString=json.dumps(NEW, separators=(",", ":")),
        VersionStages=["AWSPENDING"],
    )
    return token


def passed_its_test(app: Rig, token: str) -> None:
    """The mark testSecret leaves on a version it passed (its database check is in tests/real)."""
    boto3.client("secretsmanager").update_secret_version_stage(
        SecretId=app.arn, VersionStage="HYPERPOD_HA_TESTED", MoveToVersionId=token
    )


def test_a_finish_for_a_version_whose_test_never_passed_is_refused_and_rolls_out_nothing(
    app: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner: RolloutRunner = app.runner
    node = runner.add("a", OLD["username"], OLD["password"])
    discovered(app, [node.as_json()])
    token = pending_new_version(app, monkeypatch)  # setSecret and testSecret never ran on it
    event = {"Step": "finishSecret", "SecretId": app.arn, "ClientRequestToken": token}

    with pytest.raises(RotationRequestInvalid, match="has not passed testSecret"):
        app.lambda_handler(event, CONTEXT)

    assert stages(app.arn)[token] == ["AWSPENDING"]
    assert value(app.arn) == OLD
    assert node.restarts() == []
    assert runner.requests == []


def test_finish_moves_the_secret_then_rolls_it_out_and_a_retry_rolls_out_again(
    app: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner: RolloutRunner = app.runner
    nodes = [runner.add(name, OLD["username"], OLD["password"]) for name in ("a", "b")]
    discovered(app, [n.as_json() for n in nodes])
    token = pending_new_version(app, monkeypatch)
    passed_its_test(app, token)
    event = {"Step": "finishSecret", "SecretId": app.arn, "ClientRequestToken": token}

    first = app.lambda_handler(event, CONTEXT)

    assert first["outcome"] == "current_moved"
    assert stages(app.arn)[token] == ["AWSCURRENT", "HYPERPOD_HA_TESTED"]
    assert value(app.arn) == NEW
    assert first["rollout"]["complete"]
    assert all(
        n.credentials() == {"storageuser": "admin_clone", "storagepass": "New-Password-2"} for n in nodes
    )

    again = app.lambda_handler(event, CONTEXT)
    assert again["outcome"] == "already_current"
    assert again["rollout"]["complete"]
    assert all(n.restarts() == ["admin_clone", "admin_clone"] for n in nodes)
    assert "New-Password-2" not in json.dumps([first, again])


def test_a_failing_controller_is_reported_and_finish_still_completes(
    app: Rig, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    runner: RolloutRunner = app.runner
    broken = runner.add("broken", OLD["username"], OLD["password"])
    broken.fail_restarts()
    untouched = runner.add("untouched", OLD["username"], OLD["password"])
    discovered(app, [broken.as_json(), untouched.as_json()])
    token = pending_new_version(app, monkeypatch)
    passed_its_test(app, token)

    result = app.lambda_handler(
        {"Step": "finishSecret", "SecretId": app.arn, "ClientRequestToken": token}, CONTEXT
    )

    assert result["outcome"] == "current_moved"
    assert [c["outcome"] for c in result["rollout"]["controllers"]] == ["failed", "not_attempted"]
    assert untouched.credentials() == {"storageuser": "admin", "storagepass": "Old-Password-1"}
    failure = [r for r in caplog.records if "roll-out failed" in r.getMessage()]
    assert len(failure) == 1
    assert failure[0].instance_id == "i-broken"  # type: ignore[attr-defined]
    (incident,) = boto3.client("ssm").describe_ops_items(
        OpsItemFilters=[{"Key": "Source", "Values": ["hyperpod-ha"], "Operator": "Equal"}]
    )["OpsItemSummaries"]
    item = boto3.client("ssm").get_ops_item(OpsItemId=incident["OpsItemId"])["OpsItem"]
    assert "i-broken" in item["Description"]
    assert "rollout-failed" in json.dumps(item["OperationalData"])
    for password in ("Old-Password-1", "New-Password-2"):
        assert password not in json.dumps(item, default=str)


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        ({"Step": "rotateSecret", "ClientRequestToken": "t"}, "Step must be one of"),
        ({"Step": "createSecret"}, "no ClientRequestToken"),
        ({"action": "rollout", "controllers": "i-1"}, "must be a list"),
    ],
)
def test_bad_events_are_refused_with_a_reason(app: Rig, event: dict[str, Any], reason: str) -> None:
    with pytest.raises(RotationRequestInvalid, match=reason):
        app.lambda_handler(event, CONTEXT)


def test_an_unknown_strategy_is_refused(app: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROTATION_STRATEGY", "triple")
    token = RotationService(monkeypatch, handler=None).start(app.arn)
    with pytest.raises(RotationRequestInvalid, match="ROTATION_STRATEGY"):
        app.lambda_handler({"Step": "createSecret", "ClientRequestToken": token}, CONTEXT)


def test_the_master_secret_reaches_the_rotation_only_when_configured(
    app: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    master = "arn:aws:secretsmanager:us-east-1:123456789012:secret:rds!db-0a1b-AbCdEf"
    for configured, expected in (("", None), (master, master)):
        monkeypatch.setenv("MASTER_SECRET_ARN", configured)
        app.module._function.cache_clear()
        assert app.module._function().settings.rotation.master_secret_arn == expected
