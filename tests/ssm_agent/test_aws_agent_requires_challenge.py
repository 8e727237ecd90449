"""AWS's agent configured with ``Kms.RequireKMSChallengeResponse``: it refuses a client that does
not acknowledge the random challenge; the project's client does, so the session runs. A module of
its own: its agent runs after the other module's has stopped (one agent at a time in the sandbox)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hyperpod_ha.commands import CommandRequest
from hyperpod_ha.commands.session_encryption import SessionDataKeys
from hyperpod_ha.commands.session_manager import SessionManagerRunner
from tests.fakes.ssm_service import SessionService
from tests.ssm_agent.agent import INSTANCE_ID, RealAgent
from tests.ssm_agent.conftest import agent_log_errors, aws_client

pytestmark = pytest.mark.ssm_agent


@pytest.fixture
def demanding(service: SessionService, agent_folder: Path) -> Iterator[RealAgent]:
    with RealAgent(agent_folder, service, require_challenge_response=True) as agent:
        yield agent


def test_an_agent_that_requires_the_challenge_response_accepts_the_client(
    service: SessionService, demanding: RealAgent, session_key: str
) -> None:
    runner = SessionManagerRunner(
        aws_client(service, "ssm"), data_keys=SessionDataKeys(aws_client(service, "kms"), session_key)
    )
    result = runner.run(
        CommandRequest(INSTANCE_ID, "Separate", 60, {"command": ["sh -c 'echo secret; exit 0'"]})
    )

    assert (result.stdout, result.stderr, result.exit_code) == ("secret\n", "", 0)
    [decrypt] = [call for call in service.kms.calls if call["operation"] == "Decrypt"]
    assert "aws:ssm:RandomChallenge" in decrypt["EncryptionContext"]
    assert agent_log_errors(demanding) == []
