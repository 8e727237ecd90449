"""CommandTransport=run-command: the stack's own Command documents, not AWS-RunShellScript."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest

from hyperpod_ha.commands import CommandRequest
from hyperpod_ha.commands.run_command import RunCommandRunner
from hyperpod_ha.controllers.check import probe_parameters
from hyperpod_ha.rotation.rollout import RolloutSettings
from tests.conftest import FAST_RUNS, Embedded, _embedded


@pytest.fixture
def run_command_stack() -> Iterator[Embedded]:
    yield from _embedded({**FAST_RUNS, "CommandTransport": "run-command"})


def test_the_functions_name_this_stacks_command_documents(run_command_stack: Embedded) -> None:
    stack = run_command_stack.stack
    probe = stack.function("HealthCheckFunction").environment["PROBE_DOCUMENT"]
    rollout = stack.function("RotateDbSecretFunction").environment["ROLLOUT_DOCUMENT"]
    assert (probe, rollout) == (
        stack.ref("ControllerProbeCommandDocument"),
        stack.ref("SlurmdbdRolloutCommandDocument"),
    )
    ssm = boto3.client("ssm")
    for name in (probe, rollout):
        assert ssm.describe_document(Name=name)["Document"]["DocumentType"] == "Command"
    # The probe document takes no parameter at all: nothing but the fixed probe can run.
    assert probe_parameters(probe) == {}
    assert "Parameters" not in ssm.describe_document(Name=probe)["Document"]


def test_run_command_runs_them_with_their_own_parameters(run_command_stack: Embedded) -> None:
    stack = run_command_stack.stack
    ssm = boto3.client("ssm")
    runner = RunCommandRunner(ssm, poll_seconds=0.01)
    probe = stack.function("HealthCheckFunction").environment["PROBE_DOCUMENT"]
    assert runner.run(CommandRequest("i-0123456789abcdef0", probe, 30)).exit_code == 0
    rollout = stack.function("RotateDbSecretFunction").environment["ROLLOUT_DOCUMENT"]
    secret = "arn:aws:secretsmanager:us-east-1:123456789012:secret:slurmdbd-AbCdEf"
    parameters = RolloutSettings(secret_arn=secret, document=rollout).parameters()
    assert runner.run(CommandRequest("i-0123456789abcdef0", rollout, 30, parameters)).exit_code == 0
    # What the roll-out sends is exactly what its document declares (SSM refuses anything else).
    declared = {p["Name"] for p in ssm.describe_document(Name=rollout)["Document"]["Parameters"]}
    assert declared == set(parameters)


def test_session_manager_stacks_have_no_command_documents(embedded: Embedded) -> None:
    assert "ControllerProbeCommandDocument" not in embedded.stack.resources
    assert "SlurmdbdRolloutCommandDocument" not in embedded.stack.resources
