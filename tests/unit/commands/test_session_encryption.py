"""KMS-encrypted sessions: the data key under the operator's key, AES-256-GCM both ways, the
agent's challenge, against the fake agent doing the agent's side as AWS's agent does, with moto's
KMS as the key service of both."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws

from hyperpod_ha.commands import CommandRequest, CommandResult, EncryptionRequired, ProtocolError
from hyperpod_ha.commands.frames import MessageType, PayloadType, decode
from hyperpod_ha.commands.session_encryption import (
    SessionCipher,
    SessionDataKeys,
    SessionEncryptionSettings,
    session_data_keys,
)
from hyperpod_ha.commands.session_manager import SessionManagerRunner
from hyperpod_ha.errors import ConfigurationError
from tests.fakes.agent_encryption import AgentCipher
from tests.fakes.ssm_agent import ChannelClosed, FakeSsmAgent, Hang, exit_code, stderr, stdout
from tests.unit.commands.cases.sessions import TARGET, expect_start, expect_terminate, script

if TYPE_CHECKING:
    from mypy_boto3_kms import KMSClient
    from mypy_boto3_ssm import SSMClient

SECRET_OUTPUT = b"the controller's secret output " * 80  # several frames, each encrypted


@pytest.fixture
def kms() -> Iterator[KMSClient]:
    with mock_aws():
        yield boto3.client(
            "kms", region_name="eu-west-1", aws_access_key_id="testing", aws_secret_access_key="testing"
        )


@pytest.fixture
def key_arn(kms: KMSClient) -> str:
    return kms.create_key(Description="Session Manager preferences' key")["KeyMetadata"]["Arn"]


def encrypted(kms: KMSClient, key_arn: str, *steps: object, **options: object) -> FakeSsmAgent:
    return FakeSsmAgent(
        script(*steps, kms_key_id=key_arn, kms=kms, target_id=TARGET, **options)  # type: ignore[arg-type]
    )


def run(ssm: SSMClient, data_keys: SessionDataKeys | None, deadline: float = 10) -> CommandResult:
    runner = SessionManagerRunner(ssm, reconnect_delay=0.01, data_keys=data_keys)
    return runner.run(
        CommandRequest(target=TARGET, document="HyperPodHA-ControllerProbe", deadline_seconds=deadline)
    )


def agent_payloads(agent: FakeSsmAgent, payload_type: int) -> list[bytes]:
    frames = [decode(m.data) for m in agent.transcript if m.sender == "agent" and isinstance(m.data, bytes)]
    return [
        f.payload
        for f in frames
        if f.message_type == MessageType.OUTPUT_STREAM_DATA and f.payload_type == payload_type
    ]


@pytest.mark.parametrize(
    ("challenge", "required"),
    [(True, False), (True, True), (False, False)],
    ids=["challenge", "challenge-required", "older-agent-without-challenge"],
)
def test_an_encrypted_session_runs_and_its_output_is_decrypted(
    kms: KMSClient, key_arn: str, ssm: SSMClient, stubber: Stubber, challenge: bool, required: bool
) -> None:
    steps = (stdout(SECRET_OUTPUT), stderr(b"warning\n"), exit_code(3), ChannelClosed())
    with encrypted(
        kms, key_arn, *steps, kms_challenge=challenge, require_challenge_response=required
    ) as agent:
        expect_start(stubber, agent.stream_url)
        result = run(ssm, SessionDataKeys(kms, key_arn))

        assert agent.wait_done()
    assert (result.stdout.encode(), result.stderr, result.exit_code) == (SECRET_OUTPUT, "warning\n", 3)
    assert agent.errors == []
    assert agent.refusal is None
    [kms_action] = [
        a for a in agent.handshake_response["ProcessedClientActions"] if a["ActionType"] == "KMSEncryption"
    ]
    assert kms_action["ActionStatus"] == 1
    assert kms_action["ActionResult"]["ChallengeAcknowledgement"] is challenge
    context = agent.encryption.encryption_context
    assert context["aws:ssm:SessionId"] == agent.script.session_id
    assert context["aws:ssm:TargetId"] == TARGET
    assert ("aws:ssm:RandomChallenge" in context) is challenge
    # On the wire nothing of the output is readable, and the challenge was answered.
    wire = b"".join(agent_payloads(agent, PayloadType.OUTPUT))
    assert b"secret" not in wire
    assert len(agent_payloads(agent, PayloadType.OUTPUT)) >= 3
    assert agent_payloads(agent, PayloadType.EXIT_CODE) != [b"EXIT_CODE: 3"]
    assert agent.challenge_answered_ok


def test_a_session_that_requires_encryption_fails_at_once_without_a_key(
    kms: KMSClient, key_arn: str, ssm: SSMClient, stubber: Stubber
) -> None:
    with encrypted(kms, key_arn, Hang()) as agent:
        expect_start(stubber, agent.stream_url)
        expect_terminate(stubber)
        with pytest.raises(EncryptionRequired, match="SessionKmsKeyArn"):
            run(ssm, None)  # before the 10 s deadline: a timeout error would say so
        assert agent.wait_done()
    [kms_action] = [
        a for a in agent.handshake_response["ProcessedClientActions"] if a["ActionType"] == "KMSEncryption"
    ]
    assert kms_action["ActionStatus"] == 2
    assert "SessionKmsKeyArn" in kms_action["Error"]


def test_a_session_under_another_key_is_refused_naming_both(
    kms: KMSClient, key_arn: str, ssm: SSMClient, stubber: Stubber
) -> None:
    other = kms.create_key()["KeyMetadata"]["Arn"]
    with encrypted(kms, other, Hang()) as agent:
        expect_start(stubber, agent.stream_url)
        expect_terminate(stubber)
        with pytest.raises(EncryptionRequired) as raised:
            run(ssm, SessionDataKeys(kms, key_arn))
        assert agent.wait_done()
    assert other in raised.value.reason
    assert key_arn in raised.value.reason


def test_a_key_kms_refuses_fails_the_session_with_kms_reason(
    kms: KMSClient, key_arn: str, ssm: SSMClient, stubber: Stubber
) -> None:
    gone = key_arn.rsplit("/", 1)[0] + "/00000000-0000-0000-0000-000000000000"  # deleted, say
    with encrypted(kms, gone, Hang()) as agent:
        expect_start(stubber, agent.stream_url)
        expect_terminate(stubber)
        with pytest.raises(EncryptionRequired, match=r"GenerateDataKey .* failed: NotFoundException"):
            run(ssm, SessionDataKeys(kms, gone))
        assert agent.wait_done()


def test_the_cipher_refuses_altered_output_and_keeps_its_keys_out_of_its_repr() -> None:
    key = bytes(range(64))
    cipher, agent = SessionCipher(key), AgentCipher(key)
    sealed = agent.encrypt(b"EXIT_CODE: 0")
    assert cipher.decrypt(sealed) == b"EXIT_CODE: 0"
    with pytest.raises(ProtocolError, match="failed authentication"):
        cipher.decrypt(sealed[:-1] + bytes([sealed[-1] ^ 1]))
    with pytest.raises(ProtocolError, match="shorter"):
        cipher.decrypt(b"short")
    assert agent.decrypt(cipher.encrypt(b"to the agent")) == b"to the agent"
    assert key.hex() not in repr(cipher)
    assert "hidden" in repr(cipher)
    with pytest.raises(ProtocolError, match="32 bytes"):
        SessionCipher(key[:32])


@pytest.mark.parametrize(
    "challenge", [b"[]", b'{"Challenge": 5}', b'{"Challenge": "not base64!"}', b'{"Challenge": ""}', b"{"]
)
def test_a_malformed_challenge_is_a_protocol_error(challenge: bytes) -> None:
    with pytest.raises(ProtocolError):
        SessionCipher(bytes(64)).answer_challenge(challenge)


def test_the_challenge_answer_is_the_challenge_under_the_clients_key() -> None:
    key = bytes(range(64))
    cipher, agent = SessionCipher(key), AgentCipher(key)
    request = json.dumps({"Challenge": base64.b64encode(agent.encrypt(b"c" * 64)).decode()}).encode()
    answer = json.loads(cipher.answer_challenge(request))
    assert agent.decrypt(base64.b64decode(answer["Challenge"])) == b"c" * 64


def test_the_key_is_read_from_the_environment_and_checked() -> None:
    assert session_data_keys({}) is None
    assert session_data_keys({"SESSION_KMS_KEY_ARN": ""}) is None
    arn = "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    assert SessionEncryptionSettings.from_environment({"SESSION_KMS_KEY_ARN": arn}).key_arn == arn
    with pytest.raises(ConfigurationError, match="SESSION_KMS_KEY_ARN"):
        SessionEncryptionSettings.from_environment({"SESSION_KMS_KEY_ARN": "alias/session-key"})
