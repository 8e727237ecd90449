"""The fake agent is only worth its tests if it rejects what the real service rejects."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from hyperpod_ha.commands.frames import ClientMessage, Flags, MessageType, PayloadType, decode, encode
from tests.fakes.ssm_agent import AgentScript, ChannelClosed, FakeSsmAgent, ResendAcked, stdout

SESSION_ID = "fake-agent-check-0123456789"
TOKEN = "token-for-the-fake-agent"


def opening(token: str = TOKEN, **overrides: Any) -> str:
    message = {
        "MessageSchemaVersion": "1.0",
        "RequestId": str(uuid.uuid4()),
        "TokenValue": token,
        "ClientId": str(uuid.uuid4()),
        "ClientVersion": "1.2.650.0",
    }
    message.update(overrides)
    return json.dumps(message)


def ack_for(message: ClientMessage, **overrides: Any) -> ClientMessage:
    content = {
        "AcknowledgedMessageType": "output_stream_data",
        "AcknowledgedMessageId": str(message.message_id),
        "AcknowledgedMessageSequenceNumber": message.sequence_number,
        "IsSequentialMessage": True,
    }
    content.update(overrides)
    return ClientMessage(
        message_type=MessageType.ACKNOWLEDGE,
        sequence_number=0,
        flags=Flags.SYN | Flags.FIN,
        payload_type=PayloadType.ACKNOWLEDGE,
        payload=json.dumps(content).encode(),
    )


def handshake_response(sequence_number: int = 0) -> ClientMessage:
    response = {
        "ClientVersion": "1.2.650.0",
        "ProcessedClientActions": [
            {"ActionType": "SessionType", "ActionStatus": 1, "ActionResult": None, "Error": ""}
        ],
        "Errors": None,
    }
    return ClientMessage(
        message_type=MessageType.INPUT_STREAM_DATA,
        sequence_number=sequence_number,
        payload_type=PayloadType.HANDSHAKE_RESPONSE,
        payload=json.dumps(response).encode(),
    )


def next_output(client: ClientConnection) -> ClientMessage:
    while True:
        raw = client.recv(timeout=2)
        assert isinstance(raw, bytes)
        message = decode(raw)
        if message.message_type == MessageType.OUTPUT_STREAM_DATA:
            return message


@pytest.fixture
def agent() -> Iterator[FakeSsmAgent]:
    script = AgentScript(
        session_id=SESSION_ID, token=TOKEN, steps=(stdout(b"hi"), ResendAcked(2), ChannelClosed())
    )
    with FakeSsmAgent(script) as fake:
        yield fake


def drain(client: ClientConnection) -> None:
    for _ in range(50):
        client.recv(timeout=2)


def rejected(agent: FakeSsmAgent, client: ClientConnection) -> int | None:
    with pytest.raises(ConnectionClosed):
        drain(client)
    assert agent.wait_done()
    return client.close_code


def test_wrong_token_is_rejected(agent: FakeSsmAgent) -> None:
    with connect(agent.stream_url, compression=None) as client:
        client.send(opening(token="stolen"))
        assert rejected(agent, client) == 4003
    assert agent.errors == ["bad token"]


@pytest.mark.parametrize(
    ("first", "error"),
    [
        (b"\x00binary", "opening message is not a text frame"),
        ("not json", "opening message is not JSON"),
        (opening(ClientId="me"), "ClientId is not a UUID"),
        (opening(MessageSchemaVersion="2.0"), "bad MessageSchemaVersion"),
    ],
)
def test_bad_opening_is_rejected(agent: FakeSsmAgent, first: str | bytes, error: str) -> None:
    with connect(agent.stream_url, compression=None) as client:
        client.send(first)
        assert rejected(agent, client) == 4001
    assert agent.errors == [error]


def test_websocket_extensions_are_rejected(agent: FakeSsmAgent) -> None:
    with connect(agent.stream_url) as client:  # websockets offers permessage-deflate by default
        assert rejected(agent, client) == 4000
    assert agent.errors == ["client offered websocket extensions"]


def test_bad_digest_is_rejected(agent: FakeSsmAgent) -> None:
    with connect(agent.stream_url, compression=None) as client:
        client.send(opening())
        request = next_output(client)
        ack = ack_for(request)
        bad = ClientMessage(
            message_type=ack.message_type,
            sequence_number=0,
            flags=ack.flags,
            payload_type=ack.payload_type,
            payload=ack.payload,
            payload_digest=b"\x01" * 32,
        )
        client.send(encode(bad))
        assert rejected(agent, client) == 4006
    assert agent.errors == ["bad payload digest on acknowledge"]


def input_frame(payload_type: int, payload: bytes, sequence_number: int) -> ClientMessage:
    return ClientMessage(
        message_type=MessageType.INPUT_STREAM_DATA,
        sequence_number=sequence_number,
        payload_type=payload_type,
        payload=payload,
    )


@pytest.mark.parametrize(
    ("frame", "code", "error"),
    [
        (input_frame(PayloadType.EXIT_CODE, b"EXIT_CODE: 0", 0), 4008, "unexpected input payload type 12"),
        (
            ClientMessage(message_type=MessageType.OUTPUT_STREAM_DATA, sequence_number=0, payload=b"x"),
            4005,
            "client sent message type output_stream_data",
        ),
        (
            ClientMessage(message_type=MessageType.INPUT_STREAM_DATA, sequence_number=0, flags=Flags.SYN),
            4008,
            "input_stream_data with flags 1",
        ),
    ],
    ids=["exit-code-input", "output-stream-data", "flags"],
)
def test_what_aws_client_never_sends_is_rejected(
    agent: FakeSsmAgent, frame: ClientMessage, code: int, error: str
) -> None:
    with connect(agent.stream_url, compression=None) as client:
        client.send(opening())
        client.send(encode(ack_for(next_output(client))))
        client.send(encode(frame))
        assert rejected(agent, client) == code
    assert agent.errors == [error]


def test_header_length_112_from_the_client_is_rejected(agent: FakeSsmAgent) -> None:
    with connect(agent.stream_url, compression=None) as client:
        client.send(opening())
        frame = encode(ack_for(next_output(client)))
        client.send(bytes.fromhex("00000070") + frame[4:])
        assert rejected(agent, client) == 4005
    assert len(agent.errors) == 1
    assert agent.errors[0].startswith("undecodable frame: HeaderLength 112 does not fit")


def test_acknowledging_a_frame_never_sent_is_rejected(agent: FakeSsmAgent) -> None:
    with connect(agent.stream_url, compression=None) as client:
        client.send(opening())
        request = next_output(client)
        client.send(encode(ack_for(request, AcknowledgedMessageId=str(uuid.uuid4()))))
        assert rejected(agent, client) == 4007
    assert agent.errors == ["acknowledged a frame never sent (sequence 0)"]


def test_unacknowledged_output_is_resent_not_rejected(agent: FakeSsmAgent) -> None:
    """AWS's agent resends until acknowledged; it does not give up on a client after a second."""
    with connect(agent.stream_url, compression=None) as client:
        client.send(opening())
        client.send(encode(ack_for(next_output(client))))
        client.send(encode(handshake_response()))
        complete = next_output(client)  # HandshakeComplete, left unacknowledged for 1.5 s
        copies = [complete]
        started = time.monotonic()
        while time.monotonic() - started < 1.5:
            copies.append(next_output(client))
        output = next(m for m in copies if m.sequence_number == 2)
        again = [m for m in copies if m.sequence_number == 1]
        assert len(again) >= 5  # every 100 ms
        assert {m.message_id for m in again} == {complete.message_id}
        client.send(encode(ack_for(complete)))
        client.send(encode(ack_for(output)))
    assert agent.wait_done()
    assert agent.errors == []


def test_a_client_behaving_as_aws_client_gets_through(agent: FakeSsmAgent) -> None:
    """Resent input, a terminal-size frame, and no second ack for a resend: all as the plugin does."""
    with connect(agent.stream_url, compression=None) as client:
        client.send(opening())
        client.send(encode(ack_for(request := next_output(client))))
        assert request.payload_type == PayloadType.HANDSHAKE_REQUEST
        response = encode(handshake_response())
        client.send(response)
        client.send(response)  # a resend: acknowledged again, taken once
        client.send(encode(input_frame(PayloadType.SIZE, b'{"cols":300,"rows":100}', 1)))
        for _ in range(2):  # HandshakeComplete and the output, then the output again (not acked)
            client.send(encode(ack_for(next_output(client))))
        closed = None
        while closed is None:
            raw = client.recv(timeout=2)
            assert isinstance(raw, bytes)
            message = decode(raw)
            if message.message_type == MessageType.CHANNEL_CLOSED:
                closed = message
    assert agent.wait_done()
    assert agent.errors == []
    assert closed.header_length == 116
    assert closed.digest_is_valid()
    assert agent.acks == {0: 1, 1: 1, 2: 1}
    assert [event for event in agent.events if event[0] == "input"] == [("input", 0), ("input", 1)]
    assert agent.events.count(("sent", 2)) == 2  # the scripted resend of an acknowledged frame
