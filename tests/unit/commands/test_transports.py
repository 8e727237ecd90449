"""The public face of hyperpod_ha.commands: requests, the transport registry, import cost."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hyperpod_ha import commands
from hyperpod_ha.commands import (
    CommandRequest,
    CommandResult,
    InvalidCommandRequest,
    runner_for,
)
from hyperpod_ha.commands.run_command import RunCommandRunner
from hyperpod_ha.commands.session_manager import SessionManagerRunner
from tests.conftest import UseTransport
from tests.fakes.canned_runner import CannedRunner

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def fresh_client(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    commands._ssm_client.cache_clear()
    yield
    commands._ssm_client.cache_clear()


@pytest.mark.usefixtures("fresh_client")
@pytest.mark.parametrize(
    ("name", "runner_type"), [("session-manager", SessionManagerRunner), ("run-command", RunCommandRunner)]
)
def test_built_in_transports(name: str, runner_type: type[object]) -> None:
    runner = runner_for(name)
    assert isinstance(runner, runner_type)
    assert runner.transport == name


@pytest.mark.usefixtures("fresh_client")
def test_transports_share_one_ssm_client() -> None:
    first = runner_for("session-manager")
    second = runner_for("run-command")
    assert first._ssm is second._ssm  # type: ignore[attr-defined]
    assert first._ssm.meta.region_name == "eu-west-1"  # type: ignore[attr-defined]


def test_unknown_transport_is_bad_input() -> None:
    with pytest.raises(InvalidCommandRequest, match="unknown command transport 'carrier-pigeon'") as raised:
        runner_for("carrier-pigeon")
    assert isinstance(raised.value, ValueError)
    assert "session-manager" in str(raised.value)


def test_registered_transport_is_found(use_transport: UseTransport) -> None:
    recorded = CannedRunner(
        respond=lambda request: CommandResult(request.target, None, 0, 0.0, "recorded"), transport="recorded"
    )
    use_transport("recorded", recorded.factory)
    result = runner_for("recorded").run(CommandRequest("node", "doc", 1.0))
    assert (result.stdout, result.transport) == ("node", "recorded")


@pytest.mark.parametrize(
    ("target", "document", "deadline"),
    [
        ("", "doc", 1.0),
        ("node", "", 1.0),
        ("node", "doc", 0.0),
        ("node", "doc", -3.0),
        ("node", "doc", float("nan")),
    ],
)
def test_bad_requests_are_refused(target: str, document: str, deadline: float) -> None:
    with pytest.raises(InvalidCommandRequest):
        CommandRequest(target=target, document=document, deadline_seconds=deadline)


def test_importing_the_package_loads_no_transport() -> None:
    code = (
        "import sys, hyperpod_ha.commands;"
        "print(sorted(m for m in ('boto3', 'botocore', 'websockets', 'asyncio') if m in sys.modules))"
    )
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "layers"), str(ROOT / "lab")])}
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=environment
    ).stdout
    assert output.strip() == "[]"
