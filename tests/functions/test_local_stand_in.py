"""``hyperpod-ha local up|down`` without Docker: the moto server, the env-vars file, the session agent."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from hyperpod_ha.commands import CommandRequest
from hyperpod_ha.commands.session_manager import SessionManagerRunner
from tests.conftest import ROOT

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-m", "hyperpod_ha.cli", "local"]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, Any], Path]]:
    env_vars = tmp_path_factory.mktemp("local") / "env.json"
    up = cli("up", "--env-vars", str(env_vars))
    assert up.returncode == 0, up.stderr[-2000:]
    summary = json.loads(up.stdout)
    try:
        yield summary, env_vars
    finally:
        down = cli("down")
        assert down.returncode == 0, down.stderr
        assert (
            not Path(f"/proc/{summary['pid']}/stat").exists()
            or " Z " in Path(f"/proc/{summary['pid']}/stat").read_text()
        )
        assert sorted(p.name for p in ROOT.glob(".hyperpod-ha-local.*")) == []
        assert not env_vars.exists()
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", int(summary["endpoint"].rsplit(":", 1)[1]))) != 0


def test_the_env_vars_file_names_the_stand_ins_resources(stand_in: tuple[dict[str, Any], Path]) -> None:
    summary, env_vars = stand_in
    environment = json.loads(env_vars.read_text())
    assert {e["AWS_ENDPOINT_URL"] for e in environment.values()} == {summary["container_endpoint"]}
    assert f"LocalEndpointUrl={summary['container_endpoint']}" in summary["parameter_overrides"]
    dynamodb = boto3.client("dynamodb", endpoint_url=summary["endpoint"])
    table = environment["ControllerStatusFunction"]["STATE_TABLE"]
    assert dynamodb.describe_table(TableName=table)["Table"]["TableStatus"] == "ACTIVE"
    sfn = boto3.client("stepfunctions", endpoint_url=summary["endpoint"])
    machine = sfn.describe_state_machine(
        stateMachineArn=environment["ControllerStatusFunction"]["STATE_MACHINE_ARN"]
    )
    assert machine["stateMachineArn"] == summary["state_machine_arn"]


def test_a_second_up_is_refused(stand_in: tuple[dict[str, Any], Path], tmp_path: Path) -> None:
    again = cli("up", "--env-vars", str(tmp_path / "env.json"))
    assert again.returncode == 2
    assert "already up" in again.stderr
    assert not (tmp_path / "env.json").exists()


def test_the_probe_runs_through_session_manager_on_the_simulated_controller(
    stand_in: tuple[dict[str, Any], Path],
) -> None:
    summary, env_vars = stand_in
    health = json.loads(env_vars.read_text())["HealthCheckFunction"]
    ssm = boto3.client("ssm", endpoint_url=summary["endpoint"])
    target = "sagemaker-cluster:ml-cluster_controller-machine-i-0a1b2c3d4e5f60002"
    result = SessionManagerRunner(ssm).run(CommandRequest(target, health["PROBE_DOCUMENT"], 60))
    assert (result.transport, result.exit_code) == ("session-manager", 0)
    assert "ctl2" in result.stdout
    unknown = "sagemaker-cluster:ml-cluster_controller-machine-i-0123456789abcdef0"
    with pytest.raises(ClientError, match="TargetNotConnected"):
        ssm.start_session(Target=unknown, DocumentName=health["PROBE_DOCUMENT"])


def test_an_unknown_scenario_is_refused(tmp_path: Path) -> None:
    refused = cli("up", "--env-vars", str(tmp_path / "env.json"), "--scenario", "sideways")
    assert refused.returncode == 2
    assert "unknown scenario" in refused.stderr
