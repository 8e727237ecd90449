"""The project's fake agent, which the fast tiers use, held to what AWS's own agent sent.

``tests/fixtures/ssm_agent/`` holds transcripts of AWS's agent (``tests/ssm_agent``, recorded
through the service stand-in). For each, the fake plays the same session against the project's
client, and what the client saw of both is compared: the agent's message types, their order
(runs of output or stderr chunks count once: the chunking follows the command's writes), payload
types and flags, the handshake's actions and fields, which frames each side acknowledged, and the
client's answers. What the service itself adds (``channel_closed``) and what it does not relay
(``agent_session_state``) are not the agent's to compare.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws

from hyperpod_ha.commands import CommandError, CommandRequest
from hyperpod_ha.commands.frames import MessageType, PayloadType, decode
from hyperpod_ha.commands.session_encryption import SessionDataKeys
from hyperpod_ha.commands.session_manager import SessionManagerRunner
from tests.conftest import ROOT
from tests.fakes.ssm_agent import ChannelClosed, FakeSsmAgent, Step, exit_code, stderr, stdout
from tests.unit.commands.cases.sessions import TARGET, expect_start, expect_terminate, script

if TYPE_CHECKING:
    from mypy_boto3_ssm import SSMClient

FIXTURES = ROOT / "tests" / "fixtures" / "ssm_agent"
UNABLE = (
    b'Unable to start command: exec: "/no/such/program": stat /no/such/program: no such file or directory\n'
)
COLLAPSED = frozenset({PayloadType.OUTPUT, PayloadType.STDERR})


@dataclass(frozen=True)
class Seen:
    """One frame as the client saw it (the fake's transcript or the service's relayed frames)."""

    sender: str
    message_type: str
    sequence_number: int
    flags: int
    payload_type: int
    payload: Any  # JSON, or None


def recorded(name: str) -> list[Seen]:
    seen = []
    for line in (FIXTURES / f"{name}.jsonl").read_text().splitlines():
        frame = json.loads(line)
        if frame["relayed"]:
            payload = frame["payload"]
            seen.append(
                Seen(
                    frame["sender"],
                    frame["message_type"],
                    frame["sequence_number"],
                    frame["flags"],
                    frame["payload_type"],
                    payload
                    if not (isinstance(payload, dict) and set(payload) <= {"text", "bytes"})
                    else None,
                )
            )
    return seen


def played(agent: FakeSsmAgent) -> list[Seen]:
    seen = []
    for message in agent.transcript:
        if isinstance(message.data, str):
            continue  # the client's opening frame
        frame = decode(message.data)
        try:
            payload = json.loads(frame.payload)
        except ValueError:
            payload = None
        seen.append(
            Seen(
                message.sender,
                frame.message_type,
                frame.sequence_number,
                int(frame.flags),
                frame.payload_type,
                payload,
            )
        )
    return seen


def _keys(value: Any) -> Any:
    """A JSON value's shape: object keys (recursively), list shapes, value types."""
    if isinstance(value, dict):
        return {key: _keys(item) for key, item in sorted(value.items())}
    if isinstance(value, list):
        return [_keys(item) for item in value]
    return type(value).__name__


def shape(frames: list[Seen]) -> dict[str, Any]:
    firsts: dict[tuple[str, int], Seen] = {}
    acks: dict[str, set[int]] = {"agent": set(), "client": set()}
    for frame in frames:
        if frame.message_type in (MessageType.OUTPUT_STREAM_DATA, MessageType.INPUT_STREAM_DATA):
            firsts.setdefault((frame.sender, frame.sequence_number), frame)
        elif frame.message_type == MessageType.ACKNOWLEDGE:
            acks[frame.sender].add(frame.payload["AcknowledgedMessageSequenceNumber"])
            assert (frame.sequence_number, frame.flags, frame.payload_type) == (0, 3, 0)
    agent = [firsts[key] for key in sorted(k for k in firsts if k[0] == "agent")]
    client = [firsts[key] for key in sorted(k for k in firsts if k[0] == "client")]
    types: list[int] = []
    for frame in agent:
        if not (types and frame.payload_type in COLLAPSED and types[-1] == frame.payload_type):
            types.append(frame.payload_type)
    control = {
        frame.payload_type: _keys(frame.payload)
        for frame in agent
        if frame.payload_type
        in (PayloadType.HANDSHAKE_REQUEST, PayloadType.HANDSHAKE_COMPLETE, PayloadType.ENC_CHALLENGE_REQUEST)
    }
    return {
        "agent payload types": types,
        # SYN on the first frame, no flag on the others (their number follows the chunking)
        "agent flags": (agent[0].flags, sorted({frame.flags for frame in agent[1:]})),
        "agent control payloads": control,
        "client payload types": [frame.payload_type for frame in client],
        "client acknowledged every agent frame": acks["client"] == {f.sequence_number for f in agent},
        "agent acknowledged every client frame": acks["agent"] == {f.sequence_number for f in client},
    }


@dataclass(frozen=True)
class Case:
    transcript: str
    steps: tuple[Step, ...]
    encrypted: bool = False
    fails: bool = False


CASES = [
    Case("separate", (exit_code(0), ChannelClosed())),
    Case("merged", (stdout(b"to-stdout\nto-stderr\n"), ChannelClosed())),
    Case("not-started-merged", (stderr(UNABLE), ChannelClosed()), fails=True),
    Case("not-started-separate", (exit_code(1), stderr(UNABLE), ChannelClosed())),
    Case("many-frames", (stdout(b"1\n" * 120_000), stderr(b"2\n" * 6000), exit_code(0), ChannelClosed())),
    Case("encrypted", (stdout(b"3\n" * 4000), stderr(b"e\n"), exit_code(5), ChannelClosed()), encrypted=True),
]


@pytest.fixture
def kms_key() -> Iterator[tuple[Any, str]]:
    with mock_aws():
        kms = boto3.client("kms", region_name="eu-west-1", aws_access_key_id="t", aws_secret_access_key="t")
        yield kms, kms.create_key()["KeyMetadata"]["Arn"]


@pytest.mark.parametrize("case", CASES, ids=[case.transcript for case in CASES])
def test_the_fake_agent_sends_what_aws_agent_sends(
    case: Case, ssm: SSMClient, stubber: Stubber, kms_key: tuple[Any, str]
) -> None:
    kms, key = kms_key
    options: dict[str, Any] = {"kms_key_id": key, "kms": kms, "target_id": TARGET} if case.encrypted else {}
    with FakeSsmAgent(script(*case.steps, **options)) as agent:
        expect_start(stubber, agent.stream_url)
        if case.fails:
            expect_terminate(stubber)
        runner = SessionManagerRunner(ssm, data_keys=SessionDataKeys(kms, key) if case.encrypted else None)
        try:
            runner.run(CommandRequest(TARGET, "HyperPodHA-ControllerProbe", 10))
        except CommandError:
            assert case.fails
        assert agent.wait_done()

    assert agent.errors == []
    assert shape(played(agent)) == shape(recorded(case.transcript))


def test_every_transcript_is_held_to_the_fake_or_checked_by_hand() -> None:
    # late-client, terminated, encryption-refused and probe: timing and the service's part, checked below.
    by_hand = {"late-client", "terminated", "encryption-refused", "probe"}
    assert {path.stem for path in FIXTURES.glob("*.jsonl")} == {case.transcript for case in CASES} | by_hand


def test_aws_agent_resends_its_handshake_no_slower_than_the_fake() -> None:
    frames = [json.loads(line) for line in (FIXTURES / "late-client.jsonl").read_text().splitlines()]
    copies = [
        f["at_ms"]
        for f in frames
        if f["sender"] == "agent" and f["payload_type"] == PayloadType.HANDSHAKE_REQUEST
    ]
    gaps = [b - a for a, b in itertools.pairwise(copies)]
    assert len(copies) >= 3
    # AWS's agent: about every 200 ms until acknowledged; the fake resends at least as often.
    assert min(gaps) >= 100
    assert max(gaps) <= 1000
    assert script().resend_interval * 1000 <= min(gaps)


def test_aws_agent_ends_no_session_itself_and_the_probe_takes_the_fakes_order() -> None:
    for name in ("probe", "terminated", "late-client"):
        frames = [json.loads(line) for line in (FIXTURES / f"{name}.jsonl").read_text().splitlines()]
        assert MessageType.CHANNEL_CLOSED not in {f["message_type"] for f in frames if f["sender"] == "agent"}
    probe = recorded("probe")
    types = shape(probe)["agent payload types"]
    assert types[:2] == [PayloadType.HANDSHAKE_REQUEST, PayloadType.HANDSHAKE_COMPLETE]
    assert types[-1] == PayloadType.EXIT_CODE
