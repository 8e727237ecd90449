"""``hyperpod-ha invoke``: embedded, and against an AWS endpoint (a moto server)."""

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

from tests.conftest import ROOT

# Each test starts the hyperpod-ha command as a new Python: in `make test`, not in `make check`.
pytestmark = pytest.mark.cli_process

CLI = [sys.executable, "-m", "hyperpod_ha_cli"]


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        check=False,
    )


def test_embedded_invoke_prints_the_result_on_stdout_and_logs_on_stderr_with_verbose() -> None:
    done = run_cli(
        "invoke",
        "ControllerStatusFunction",
        "--event",
        "events/sns_controller_on_primary.json",
        "--embedded",
        "--verbose",
    )
    assert done.returncode == 0, done.stderr
    (record,) = json.loads(done.stdout)["records"]
    assert record["outcome"] == "started"
    assert '"message":"controller notification handled"' in done.stderr


def test_embedded_invoke_without_verbose_prints_only_the_result() -> None:
    done = run_cli(
        "invoke", "ControllerStatusFunction", "--event", "events/sns_controller_on_primary.json", "--embedded"
    )
    assert done.returncode == 0, done.stderr
    (record,) = json.loads(done.stdout)["records"]  # stdout is exactly one JSON document
    assert record["outcome"] == "started"
    assert done.stderr == ""


def test_embedded_invoke_of_bad_input_returns_the_rejection() -> None:
    done = run_cli(
        "invoke", "HyperPodEventFunction", "--event", "events/eventbridge_malformed.json", "--embedded"
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["records"][0]["outcome"] == "rejected"


def test_embedded_invoke_of_a_deeply_nested_run_input_is_a_typed_reject(tmp_path: Path) -> None:
    event = tmp_path / "abandoned.json"
    machine = (
        "arn:aws:states:us-east-1:123456789012:stateMachine:hyperpod-ha-FailoverVerificationStateMachine"
    )
    detail = {
        "status": "ABORTED",
        "stateMachineArn": machine,
        "executionArn": machine.replace(":stateMachine:", ":execution:") + ":run-1",
        "input": "[" * 100_000,
    }
    event.write_text(json.dumps({"source": "aws.states", "detail": detail}))
    done = run_cli("invoke", "AbandonedRunFunction", "--event", str(event), "--embedded")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["outcome"] == "ignored"
    assert "nests deeper" in result["reason"]


def test_an_unknown_function_is_a_clear_error() -> None:
    done = run_cli(
        "invoke", "NoSuchFunction", "--event", "events/sns_controller_on_primary.json", "--embedded"
    )
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()  # one line, no traceback
    assert line.startswith("hyperpod-ha: invoke: NoSuchFunction is not a function of the template; known: ")
    assert "HealthCheckFunction" in line
    assert done.stdout == ""


@pytest.fixture
def moto_server() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def test_invoke_against_an_endpoint(
    moto_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hyperpod_ha_dev.embedded.site import create_site
    from hyperpod_ha_dev.embedded.stack import create_stack

    # The stack's resources live on the server; the CLI only gets the endpoint and the environment.
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server)
    site = create_site()
    stack = create_stack(ROOT, {**site.stack_parameters(), "SettleSeconds": 600})
    env_vars = tmp_path / "env.json"
    env_vars.write_text(
        json.dumps({"ControllerStatusFunction": dict(stack.function("ControllerStatusFunction").environment)})
    )

    done = run_cli(
        "invoke",
        "ControllerStatusFunction",
        "--event",
        "events/sns_controller_on_primary.json",
        "--env-vars",
        str(env_vars),
        env={"AWS_ENDPOINT_URL": moto_server},
    )
    assert done.returncode == 0, done.stderr
    (record,) = json.loads(done.stdout)["records"]
    assert record["outcome"] == "started"
    executions: list[dict[str, Any]] = boto3.client("stepfunctions").list_executions(
        stateMachineArn=stack.outputs["FailoverVerificationStateMachineArn"]
    )["executions"]
    assert [e["executionArn"] for e in executions] == [record["execution_arn"]]


def test_in_process_logs_carry_the_functions_service_name() -> None:
    # The CLI imports the runtime package before any function's environment is set.
    done = run_cli(
        "invoke",
        "ControllerStatusFunction",
        "--event",
        "events/sns_controller_on_primary.json",
        "--embedded",
        "--verbose",
        env={"POWERTOOLS_SERVICE_NAME": ""},
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    handled = [line for line in lines if line.get("message") == "controller notification handled"]
    assert handled
    assert {line["service"] for line in handled} == {"hyperpod-ha"}
    assert "service_undefined" not in done.stderr
