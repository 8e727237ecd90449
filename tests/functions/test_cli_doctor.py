"""``hyperpod-ha doctor`` against the local stand-in (a moto server with the stack, and Session
Manager served by the simulated controllers' agent): each check with its outcome and fix, exit 1
while one fails, 0 once the operator has fixed them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from hyperpod_ha.status_records import StatusRecords
from tests.conftest import ROOT

CLI = [sys.executable, "-m", "hyperpod_ha_cli"]
# Each test starts the hyperpod-ha command as a new Python: in `make test`, not in `make check`.
pytestmark = [pytest.mark.slow, pytest.mark.cli_process]


def run(state: Path, *args: str, endpoint: str | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "HYPERPOD_HA_LOCAL_DIR": str(state)}
    if endpoint:
        environment["AWS_ENDPOINT_URL"] = endpoint
    return subprocess.run(
        [*CLI, *args], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, Any]]]:
    state = tmp_path_factory.mktemp("stand-in")
    up = run(state, "local", "up", "--env-vars", str(state / "env.json"))
    assert up.returncode == 0, up.stderr[-2000:]
    try:
        yield state, json.loads(up.stdout)
    finally:
        assert run(state, "local", "down").returncode == 0


def doctor(state: Path, endpoint: str) -> tuple[int, dict[str, Any]]:
    done = run(
        state, "doctor", "--cluster", "ml-cluster", "--stack-name", "hyperpod-ha", "--json", endpoint=endpoint
    )
    assert done.stderr == "", done.stderr
    return done.returncode, json.loads(done.stdout)


def outcomes(report: dict[str, Any]) -> dict[str, str]:
    return {check["check"]: check["outcome"] for check in report["checks"]}


def test_a_fresh_stack_fails_until_someone_is_told_and_a_verdict_is_recorded(
    stand_in: tuple[Path, dict[str, Any]],
) -> None:
    state, summary = stand_in
    endpoint = summary["endpoint"]
    code, report = doctor(state, endpoint)
    assert code == 1
    seen = outcomes(report)
    assert seen["credentials"] == "ok"
    assert seen["stack"] == "ok"
    assert seen["cluster"] == "ok"
    reached = [name for name in seen if name.startswith("session manager ")]
    assert len(reached) == 2
    assert all(seen[name] == "ok" for name in reached)
    assert seen["session preferences"] == "ok"
    assert seen["failover topic"] == "ok"
    assert seen["watchdog"] == "ok"
    assert seen["silence"] == "ok"
    (told,) = [c for c in report["checks"] if c["check"] == "notification topic"]
    assert told["outcome"] == "FAIL"
    assert "nobody is told" in told["detail"]
    assert told["fix"].startswith("aws sns subscribe --topic-arn ")
    (verdict,) = [c for c in report["checks"] if c["check"] == "last verdict"]
    assert (verdict["outcome"], verdict["detail"]) == ("FAIL", "none recorded yet")
    assert "hyperpod-ha runbook start --cluster ml-cluster --stack-name hyperpod-ha" in verdict["fix"]

    # The operator subscribes, a verification records its verdict: every check passes.
    sns = boto3.client("sns", endpoint_url=endpoint, region_name="us-east-1")
    sqs = boto3.client("sqs", endpoint_url=endpoint, region_name="us-east-1")
    queue = sqs.create_queue(QueueName="on-call")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    outputs = _outputs(state)
    sns.subscribe(TopicArn=outputs["NotificationTopicArn"], Protocol="sqs", Endpoint=queue_arn)
    dynamodb = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
    assert StatusRecords(dynamodb, outputs["StateTableName"]).put(
        "ml-cluster", "verdict", {"verdict": "HEALTHY"}
    )
    code, report = doctor(state, endpoint)
    assert outcomes(report)["notification topic"] == "ok"
    assert outcomes(report)["last verdict"] == "ok"
    assert code == 0, report
    assert report["passed"] is True


def test_a_stack_of_another_cluster_is_refused_before_any_check(
    stand_in: tuple[Path, dict[str, Any]],
) -> None:
    state, summary = stand_in
    done = run(
        state,
        "doctor",
        "--cluster",
        "other-cluster",
        "--stack-name",
        "hyperpod-ha",
        endpoint=summary["endpoint"],
    )
    assert done.returncode == 2
    assert "watches cluster 'ml-cluster', not 'other-cluster'" in done.stderr


def _outputs(state: Path) -> dict[str, str]:
    outputs: dict[str, str] = json.loads((state / ".hyperpod-ha-local.json").read_text())["outputs"]
    return outputs
