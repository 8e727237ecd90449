"""``hyperpod-ha silence start|list|end`` on a deployed stack (moto: CloudFormation, DynamoDB,
STS): the state table found from the stack's outputs, the caller's ARN as who, the bounds
refused before anything is written, a stack of another cluster refused, ``--json`` one
document, and ``status`` showing the silence in force."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from hyperpod_ha.silences import Silences
from hyperpod_ha_cli.main import main

REGION = "us-east-1"
STACK = "hyperpod-ha-ml-cluster"
# What `silence` reads of the stack: the cluster it watches and its state table.
TEMPLATE = {
    "Resources": {
        "StateTable": {
            "Type": "AWS::DynamoDB::Table",
            "Properties": {
                "BillingMode": "PAY_PER_REQUEST",
                "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            },
        }
    },
    "Outputs": {
        "ClusterName": {"Value": "ml-cluster"},
        "StateTableName": {"Value": {"Ref": "StateTable"}},
    },
}


@pytest.fixture
def stack(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Iterator[str]:
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
        "HYPERPOD_HA_CONFIG": str(tmp_path / "none.toml"),
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)  # no checkout's samconfig.toml
    with mock_aws():
        boto3.client("cloudformation").create_stack(StackName=STACK, TemplateBody=json.dumps(TEMPLATE))
        outputs = boto3.client("cloudformation").describe_stacks(StackName=STACK)["Stacks"][0]["Outputs"]
        yield next(o["OutputValue"] for o in outputs if o["OutputKey"] == "StateTableName")


def silence(capsys: pytest.CaptureFixture[str], *words: str) -> tuple[int, Any]:
    code = main(["silence", *words, "--region", REGION, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out)


def test_start_list_end_a_silence_with_who_and_why(stack: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, started = silence(
        capsys, "start", "--cluster", "ml-cluster", "--for", "2h", "--reason", "kernel upgrade"
    )
    assert code == 0
    who = boto3.client("sts").get_caller_identity()["Arn"]
    kept = started["started"]
    assert (kept["until"] - kept["started_at"], kept["started_by"], kept["reason"]) == (
        7200,
        who,
        "kernel upgrade",
    )
    assert Silences(boto3.client("dynamodb"), stack).in_force("ml-cluster") is not None

    code, listed = silence(capsys, "list", "--cluster", "ml-cluster")
    assert code == 0
    assert listed["in_force"]["silence_id"] == kept["silence_id"]

    code, ended = silence(capsys, "end", "--cluster", "ml-cluster")
    assert code == 0
    assert ended["ended"]["ended_by"] == who
    assert Silences(boto3.client("dynamodb"), stack).in_force("ml-cluster") is None

    code, listed = silence(capsys, "list", "--cluster", "ml-cluster")
    assert listed["in_force"] is None
    assert [s["ended_by"] for s in listed["silences"]] == [who]  # kept for the audit


def test_a_second_start_and_an_end_of_nothing_are_usage_errors(
    stack: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, error = silence(capsys, "end", "--cluster", "ml-cluster")
    assert (code, error["exit_code"]) == (2, 2)
    assert "no silence is in force" in error["error"]
    assert silence(capsys, "start", "--cluster", "ml-cluster", "--for", "30m", "--reason", "one")[0] == 0
    code, error = silence(capsys, "start", "--cluster", "ml-cluster", "--for", "30m", "--reason", "two")
    assert code == 2
    assert "a silence is in force" in error["error"]


@pytest.mark.parametrize(
    ("words", "why"),
    [
        (("--for", "25h", "--reason", "too long"), "from 60 to 86400 seconds"),
        (("--for", "30s", "--reason", "too short"), "from 60 to 86400 seconds"),
        (("--for", "1h", "--reason", "x" * 513), "1 to 512 characters"),
        (("--for", "1h"), "--reason"),
    ],
)
def test_bounds_are_refused_before_anything_is_written(
    stack: str, capsys: pytest.CaptureFixture[str], words: tuple[str, ...], why: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["silence", "start", "--cluster", "ml-cluster", *words, "--region", REGION])
    assert exited.value.code == 2
    assert why in capsys.readouterr().err
    assert Silences(boto3.client("dynamodb"), stack).read("ml-cluster").last is None


def test_a_stack_of_another_cluster_is_refused(stack: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, error = silence(
        capsys, "start", "--cluster", "other", "--stack-name", STACK, "--for", "1h", "--reason", "r"
    )
    assert code == 2
    assert "watches cluster 'ml-cluster', not 'other'" in error["error"]
    assert Silences(boto3.client("dynamodb"), stack).read("other").last is None


def test_status_shows_the_silence_in_force(stack: str, capsys: pytest.CaptureFixture[str]) -> None:
    from hyperpod_ha_cli.status import _silence, render

    assert _silence(stack, "ml-cluster") is None
    silence(capsys, "start", "--cluster", "ml-cluster", "--for", "90m", "--reason", "AMI roll-out")
    silenced = _silence(stack, "ml-cluster")  # what cluster_status puts under "silence"
    assert silenced is not None
    text = render({"cluster": "ml-cluster", "silence": silenced}, now=silenced["started_at"])
    assert "SILENCED until " in text
    assert "(1 h 30 min left) by " in text
    assert text.splitlines()[1].endswith(": AMI roll-out")
    assert "SILENCED" not in render({"cluster": "ml-cluster", "silence": None})


def test_doctor_warns_while_a_silence_is_in_force(stack: str, capsys: pytest.CaptureFixture[str]) -> None:
    from hyperpod_ha_cli.doctor import WARN, _silence
    from hyperpod_ha_cli.stacks import Target

    target = Target("ml-cluster", STACK, REGION, None)
    outputs = {"StateTableName": stack}
    assert _silence(target, outputs).outcome == "ok"
    silence(capsys, "start", "--cluster", "ml-cluster", "--for", "1h", "--reason", "AMI roll-out")
    check = _silence(target, outputs)
    assert check.outcome == WARN
    assert check.detail.endswith(": AMI roll-out)")
    assert check.fix == f"hyperpod-ha silence end --cluster ml-cluster --stack-name {STACK}"
