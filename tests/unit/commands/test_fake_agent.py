"""The fake agent is only worth its tests if it rejects what the real service rejects."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from hyperpod_ha.commands.frames import ClientMessage, Flags, MessageType, PayloadType, decode, encode
from tests.fakes.ssm_agent import AgentScript, ChannelClosed, FakeSsmAgent, stdout

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
        session_id=SESSION_ID, token=TOKEN, steps=(stdout(b"hi"), ChannelClosed()), ack_timeout=0.3
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


def test_wrong_input_sequence_number_is_rejected(agent: FakeSsmAgent) -> None:
    with connect(agent.stream_url, compression=None) as client:
        client.send(opening())
        request = next_output(client)
        client.send(encode(ack_for(request)))
        client.send(encode(handshake_response(sequence_number=1)))
        assert rejected(agent, client) == 4008
    assert agent.errors == ["input_stream_data sequence 1, expected 0"]


def test_acknowledging_a_frame_never_sent_is_rejected(agent: FakeSsmAgent) -> None:
    with connect(agent.stream_url, compression=None) as client:
        client.send(opening())
        request = next_output(client)
        client.send(encode(ack_for(request, AcknowledgedMessageId=str(uuid.uuid4()))))
        assert rejected(agent, client) == 4007
    assert agent.errors == ["acknowledged a frame never sent (sequence 0)"]


def test_missing_acknowledgement_is_rejected(agent: FakeSsmAgent) -> None:
    with connect(agent.stream_url, compression=None) as client:
        client.send(opening())
        request = next_output(client)
        client.send(encode(ack_for(request)))
        client.send(encode(handshake_response()))
        next_output(client)  # HandshakeComplete, deliberately never acknowledged
        assert rejected(agent, client) == 4010
    assert agent.errors == ["output frame 1 was never acknowledged"]


def test_a_correct_client_gets_through(agent: FakeSsmAgent) -> None:
    with connect(agent.stream_url, compression=None) as client:
        client.send(opening())
        client.send(encode(ack_for(request := next_output(client))))
        assert request.payload_type == PayloadType.HANDSHAKE_REQUEST
        client.send(encode(handshake_response()))
        for _ in range(2):  # HandshakeComplete and the output
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
    assert closed.header_length == 112
    assert agent.acks == {0: 1, 1: 1, 2: 1}
