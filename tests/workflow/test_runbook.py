"""``hyperpod-ha runbook start`` against the embedded stack: start, join, follow, exit codes."""

from __future__ import annotations

import json

import boto3
import pytest

from hyperpod_ha_cli import following
from hyperpod_ha_cli.main import main
from hyperpod_ha_dev.simulation.engine import simulated_run
from hyperpod_ha_dev.simulation.scenarios import SCENARIOS
from tests.conftest import ROOT

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def quick_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(following, "POLL_SECONDS", 0.2)
    monkeypatch.chdir(ROOT)


def runbook(*extra: str) -> int:
    return main(["runbook", "start", "--cluster", "ml-cluster", "--stack-name", "hyperpod-ha", *extra])


def test_a_verified_cluster_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    with simulated_run(SCENARIOS["healthy"], ROOT) as run:
        code = runbook("--follow", "--reason", "drill after patching")
        out = capsys.readouterr().out
        (execution,) = run.stack.executions()
    assert code == 0
    assert f"started verification {execution['executionArn']}" in out
    assert "Decide the verdict" in out
    assert "verified: verdict HEALTHY" in out


def test_a_cluster_not_verified_exits_1_with_the_incident(capsys: pytest.CaptureFixture[str]) -> None:
    scenario = SCENARIOS["both-down"]
    with simulated_run(scenario, ROOT):
        code = runbook("--follow")
        out = capsys.readouterr().out
    assert code == 1
    assert "NOT verified: verdict DOWN" in out
    assert "incident: " in out


def test_an_execution_that_fails_is_a_runtime_error_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    with simulated_run(SCENARIOS["healthy"], ROOT) as run:
        boto3.client("sagemaker").delete_cluster(ClusterName=run.site.cluster_name)
        code = runbook("--follow")
        out = capsys.readouterr().out
    assert code == 3
    assert "could not verify: verdict - (the execution ended FAILED: VerificationError)" in out


def test_an_operator_joins_the_run_already_active(capsys: pytest.CaptureFixture[str]) -> None:
    with simulated_run(SCENARIOS["healthy"], ROOT) as run:
        run.notify(SCENARIOS["healthy"].notification)
        (running,) = run.stack.executions()
        code = runbook()
        out = capsys.readouterr().out
        assert len(run.stack.executions()) == 1
        run.stack.stop_running_executions()
    assert code == 0
    assert f"joined the running verification {running['executionArn']}" in out


def test_a_dry_run_takes_no_snapshot(capsys: pytest.CaptureFixture[str]) -> None:
    with simulated_run(SCENARIOS["healthy"], ROOT):
        code = runbook("--follow", "--dry-run")
        assert boto3.client("fsx").describe_backups()["Backups"] == []
    assert code == 0
    assert "Snapshot the Slurm state" not in capsys.readouterr().out


def test_no_such_stack_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with simulated_run(SCENARIOS["healthy"], ROOT):
        code = main(["runbook", "start", "--cluster", "ml-cluster", "--stack-name", "nope"])
    assert code == 2
    assert "no stack nope (--stack-name) in us-east-1" in capsys.readouterr().err


def test_a_cluster_the_stack_does_not_watch_is_refused_before_anything_starts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with simulated_run(SCENARIOS["healthy"], ROOT) as run:
        code = main(
            ["runbook", "start", "--cluster", "other-cluster", "--stack-name", "hyperpod-ha", "--follow"]
        )
        assert run.stack.executions() == []
    assert code == 2
    assert "watches cluster 'ml-cluster', not 'other-cluster'" in capsys.readouterr().err


def test_json_waits_and_prints_the_ending_as_one_object(capsys: pytest.CaptureFixture[str]) -> None:
    with simulated_run(SCENARIOS["both-down"], ROOT):
        code = runbook("--json")
    ending = json.loads(capsys.readouterr().out)
    assert code == 1
    assert (ending["verdict"], ending["verified"], ending["exit_code"]) == ("DOWN", False, 1)
    assert ending["incident"]
    assert ending["reasons"]
