"""``hyperpod-ha local up|down`` without Docker: the moto server, the env-vars file, the session agent.

Each test keeps the stand-in's state in its own directory (``HYPERPOD_HA_LOCAL_DIR``), never
beside a developer's own stand-in in the checkout.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
from botocore.exceptions import ClientError

from hyperpod_ha.commands import CommandRequest
from hyperpod_ha.commands.session_manager import SessionManagerRunner
from tests.conftest import ROOT

# Each test starts the hyperpod-ha command as a new Python: in `make test`, not in `make check`.
pytestmark = pytest.mark.cli_process

CLI = [sys.executable, "-m", "hyperpod_ha_cli", "local"]


def cli(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "HYPERPOD_HA_LOCAL_DIR": str(state)}
    return subprocess.run(
        [*CLI, *args], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300, check=False
    )


def running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


@pytest.mark.slow
def test_up_serves_the_stack_and_down_leaves_nothing(tmp_path: Path) -> None:
    env_vars = tmp_path / "env.json"
    up = cli(tmp_path, "up", "--env-vars", str(env_vars))
    assert up.returncode == 0, up.stderr[-2000:]
    summary = json.loads(up.stdout)
    try:
        # The env-vars file: every function, the stand-in's names and its endpoint.
        environment = json.loads(env_vars.read_text())
        assert {e["AWS_ENDPOINT_URL"] for e in environment.values()} == {summary["container_endpoint"]}
        assert f"LocalEndpointUrl={summary['container_endpoint']}" in summary["parameter_overrides"]
        dynamodb = boto3.client("dynamodb", endpoint_url=summary["endpoint"])
        table = environment["ControllerStatusFunction"]["STATE_TABLE"]
        assert dynamodb.describe_table(TableName=table)["Table"]["TableStatus"] == "ACTIVE"
        sfn = boto3.client("stepfunctions", endpoint_url=summary["endpoint"])
        arn = environment["ControllerStatusFunction"]["STATE_MACHINE_ARN"]
        assert (
            sfn.describe_state_machine(stateMachineArn=arn)["stateMachineArn"] == summary["state_machine_arn"]
        )

        # The probe through the real Session Manager client, on the simulated controller.
        health = environment["HealthCheckFunction"]
        ssm = boto3.client("ssm", endpoint_url=summary["endpoint"])
        target = "sagemaker-cluster:ml-cluster_controller-machine-i-0a1b2c3d4e5f60002"
        result = SessionManagerRunner(ssm).run(CommandRequest(target, health["PROBE_DOCUMENT"], 60))
        assert (result.transport, result.exit_code) == ("session-manager", 0)
        assert "ctl2" in result.stdout
        unknown = "sagemaker-cluster:ml-cluster_controller-machine-i-0123456789abcdef0"
        with pytest.raises(ClientError, match="TargetNotConnected"):
            ssm.start_session(Target=unknown, DocumentName=health["PROBE_DOCUMENT"])

        # One stand-in per checkout.
        again = cli(tmp_path, "up", "--env-vars", str(tmp_path / "other.json"))
        assert again.returncode == 2
        assert "already up" in again.stderr
        assert not (tmp_path / "other.json").exists()
    finally:
        down = cli(tmp_path, "down")
    assert down.returncode == 0, down.stderr
    assert not running(int(summary["pid"]))
    assert sorted(p.name for p in tmp_path.glob(".hyperpod-ha-local.*")) == []
    assert not env_vars.exists()
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", int(summary["endpoint"].rsplit(":", 1)[1]))) != 0
    assert "not up" in cli(tmp_path, "down").stderr  # idempotent


def test_an_unknown_scenario_is_refused(tmp_path: Path) -> None:
    refused = cli(tmp_path, "up", "--env-vars", str(tmp_path / "env.json"), "--scenario", "sideways")
    assert refused.returncode == 2
    assert "unknown scenario" in refused.stderr
    assert not (tmp_path / "env.json").exists()
