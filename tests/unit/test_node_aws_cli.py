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


TOPIC = "arn:aws:sns:us-east-1:123456789012:slurm-failover"
MESSAGE = "Slurm trigger backup_slurmctld_failure fired on ctl1 at 2026-12-06T17:00:00Z"


def publish(tools: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return aws(tools, "sns", "publish", *options)


def test_a_publish_is_one_json_line_in_the_outbox_and_a_message_id(tmp_path: Path) -> None:
    outbox = tmp_path / "shared" / "sns_outbox.log"
    outbox.parent.mkdir()
    node_aws_cli.install(tmp_path / "tools", sys.executable, outbox=outbox)
    options = ["--region", "us-east-1", "--topic-arn", TOPIC, "--subject", "Slurm Trigger", "--message"]
    first = publish(tmp_path / "tools", *options, MESSAGE)
    assert first.returncode == 0, first.stderr
    assert set(json.loads(first.stdout)) == {"MessageId"}
    # In any order, without a subject, a message over several lines: still one line each.
    second = publish(tmp_path / "tools", "--message", "two\nlines", "--topic-arn", TOPIC)
    assert second.returncode == 0, second.stderr
    lines = outbox.read_text().splitlines()
    assert len(lines) == 2
    one, two = (json.loads(line) for line in lines)
    assert (one["topic_arn"], one["subject"], one["message"]) == (TOPIC, "Slurm Trigger", MESSAGE)
    assert one["at"].endswith("Z")
    assert (two["subject"], two["message"]) == (None, "two\nlines")
    assert stat.S_IMODE(outbox.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("options", "code", "said"),
    [
        (["--topic-arn", TOPIC], 252, "required"),
        (["--topic-arn", TOPIC, "--message", "m", "--message-attributes", "{}"], 252, "answers only"),
        (["--topic-arn", TOPIC, "--message", "m", "--message", "again"], 252, "answers only"),
        (["--topic-arn", TOPIC, "--message"], 252, "answers only"),
        (["--topic-arn", TOPIC, "--message", ""], 254, "Empty message"),
        (["--topic-arn", TOPIC, "--message", "m" * (node_aws_cli.MESSAGE_CHARS + 1)], 254, "too long"),
        (["--topic-arn", TOPIC, "--message", "m", "--subject", "x" * 101], 254, "Subject"),
        (["--topic-arn", TOPIC, "--message", "m", "--subject", "two\nlines"], 254, "Subject"),
    ],
)
def test_a_publish_sns_would_refuse_is_refused_and_writes_nothing(
    tmp_path: Path, options: list[str], code: int, said: str
) -> None:
    outbox = tmp_path / "outbox"
    node_aws_cli.install(tmp_path / "tools", sys.executable, outbox=outbox)
    refused = publish(tmp_path / "tools", *options)
    assert (refused.returncode, refused.stdout) == (code, "")
    assert said in refused.stderr
    assert not outbox.exists()


def test_without_an_outbox_a_publish_is_refused_as_a_role_without_the_grant(tmp_path: Path) -> None:
    node_aws_cli.install(tmp_path, sys.executable)
    refused = publish(tmp_path, "--topic-arn", TOPIC, "--message", MESSAGE)
    assert refused.returncode == 254
    assert "AuthorizationError" in refused.stderr
