"""The lab's and the tests' ``aws`` on a controller (``node_aws_cli``) and the lab's NodeSecret:
the roll-out's node script reads the secret as on HyperPod, through the AWS CLI, and the stand-in
answers that one call for the one secret served, only while it is served (issue 35: no test seam
in the script that runs as root)."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from hyperpod_ha.rotation import slurmdbd_credentials as node
from hyperpod_ha_dev.simulation import node_aws_cli
from hyperpod_ha_dev.simulation.lab.node_secret import NodeSecret

SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:slurmdbd-AbCdEf"
CALL = [
    "secretsmanager",
    "get-secret-value",
    "--secret-id",
    SECRET,
    "--version-stage",
    "AWSCURRENT",
    "--query",
    "SecretString",
    "--output",
    "text",
]


def aws(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(directory / "aws"), *args], capture_output=True, text=True, check=False, timeout=30
    )


def test_the_served_secret_is_answered_to_the_node_scripts_call_only(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    node_aws_cli.install(tools, sys.executable)
    assert stat.S_IMODE(tools.stat().st_mode) == 0o700
    node_aws_cli.serve(tools, SECRET, '{"username":"u","password":"p"}')
    assert stat.S_IMODE((tools / node_aws_cli.SERVED).stat().st_mode) == 0o600

    answered = aws(tools, *CALL, "--region", "us-east-1")
    assert (answered.returncode, answered.stdout) == (0, '{"username":"u","password":"p"}\n')

    other = aws(tools, *[SECRET + "x" if part == SECRET else part for part in CALL])
    assert other.returncode == 254
    assert "AccessDeniedException" in other.stderr
    for call in (["secretsmanager", "list-secrets"], ["sts", "get-caller-identity"], CALL[:-1]):
        refused = aws(tools, *call)
        assert refused.returncode == 252, call
        assert refused.stdout == ""

    node_aws_cli.withdraw(tools)
    assert aws(tools, *CALL).returncode == 254  # nothing served between requests


def test_the_node_script_reads_the_secret_through_the_stand_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    node_aws_cli.install(tmp_path, sys.executable)
    node_aws_cli.serve(tmp_path, SECRET, '{"username":"u","password":"p"}')
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    assert node.credentials_from(node.fetch_secret(SECRET)) == ("u", "p")


def test_the_lab_serves_awscurrent_for_one_request_and_leaves_nothing(tmp_path: Path) -> None:
    with mock_aws():
        arn = boto3.client("secretsmanager").create_secret(
            Name="slurmdbd", SecretString=json.dumps({"username": "u", "password": "p"})
        )["ARN"]
        (tmp_path / "node-secret").mkdir()
        (tmp_path / "node-secret" / "left-by-a-killed-run").write_text("x")
        secret = NodeSecret(tmp_path / "node-secret")
        assert sorted(p.name for p in secret.tools.iterdir()) == ["aws"]  # the leftover is gone
        with secret.serving(arn):
            call = [part if part != SECRET else arn for part in CALL]
            answered = aws(secret.tools, *call)
            assert json.loads(answered.stdout) == {"username": "u", "password": "p"}
        assert aws(secret.tools, *call).returncode == 254
        with secret.serving(None):  # a request that names no secret serves none
            assert aws(secret.tools, *call).returncode == 254
        secret.close()
        assert not secret.tools.exists()
