"""What the client sends the fake SSM agent: the opening, frames, acknowledgements, input;
anything AWS's client never sends is refused."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from hyperpod_ha.commands.frames import (
    HEADER_LENGTH,
    ClientMessage,
    Flags,
    FrameError,
    MessageType,
    PayloadType,
    decode,
    encode,
)
from tests.fakes.session_state import (
    AGENT_CLOCK_MILLIS,
    CLIENT_INPUT_TYPES,
    Rejection,
    SessionState,
)


class SessionInput(SessionState):
    async def attach(self, websocket: ServerConnection) -> None:
        """A reconnection (after ResumeSession): the session goes on over ``websocket``."""
        try:
            if not self.dropping or self.script.resume_token is None:
                raise Rejection(4011, "unexpected second connection")
            await self._accept(websocket, self.script.resume_token, first=False)
        except Rejection as rejection:
            self.rejection = rejection
            self.client_gone.set()
            await websocket.close(rejection.code, rejection.reason[:100])
            return
        self.dropping = False
        self.websocket = websocket
        self.reconnected.set()
        await self.finished.wait()

    async def _accept(self, websocket: ServerConnection, token: str, *, first: bool) -> None:
        request = websocket.request
        assert request is not None
        if first:
            self.agent.request_headers = dict(request.headers.raw_items())
        expected_path = f"/v1/data-channel/{self.script.session_id}?role=publish_subscribe"
        if request.path != expected_path:
            raise Rejection(4004, f"unexpected path {request.path}")
        if "Sec-WebSocket-Extensions" in request.headers:
            raise Rejection(4000, "client offered websocket extensions")
        opening = await self._read_opening(websocket, token)
        if not first and opening.get("ClientId") != self.agent.openings[0].get("ClientId"):
            raise Rejection(4001, "ClientId changed on reconnection")
        self.tasks.append(asyncio.create_task(self._read(websocket)))

    async def _read_opening(self, websocket: ServerConnection, token: str) -> dict[str, Any]:
        try:
            first = await asyncio.wait_for(websocket.recv(), 2)
        except TimeoutError:
            raise Rejection(4001, "no opening message") from None
        self.agent.record("client", first)
        if not isinstance(first, str):
            raise Rejection(4001, "opening message is not a text frame")
        try:
            opening = json.loads(first)
        except ValueError:
            raise Rejection(4001, "opening message is not JSON") from None
        if not isinstance(opening, dict):
            raise Rejection(4001, "opening message is not a JSON object")
        self.agent.openings.append(opening)
        if opening.get("TokenValue") != token:
            raise Rejection(4003, "bad token")
        if opening.get("MessageSchemaVersion") != "1.0":
            raise Rejection(4001, "bad MessageSchemaVersion")
        for key in ("RequestId", "ClientId"):
            try:
                uuid.UUID(str(opening.get(key)))
            except ValueError:
                raise Rejection(4001, f"{key} is not a UUID") from None
        if not isinstance(opening.get("ClientVersion"), str):
            raise Rejection(4001, "ClientVersion missing")
        return opening

    async def _read(self, websocket: ServerConnection) -> None:
        try:
            async for raw in websocket:
                self.agent.record("client", raw)
                if isinstance(raw, str):
                    raise Rejection(4001, "text message after the opening")
                await self._on_frame(raw)
        except Rejection as rejection:
            self.rejection = rejection
        except ConnectionClosed:
            pass
        except (ValueError, TypeError, AttributeError) as error:  # malformed JSON payloads and the like
            self.rejection = Rejection(4005, f"malformed frame content ({type(error).__name__})")
        if websocket is self.websocket and (self.rejection is not None or not self.dropping):
            self.client_gone.set()

    async def _on_frame(self, raw: bytes) -> None:
        try:
            message = decode(raw)
        except FrameError as error:
            raise Rejection(4005, f"undecodable frame: {error.reason}") from None
        if message.header_length != HEADER_LENGTH:
            raise Rejection(4005, f"HeaderLength {message.header_length}")
        if message.schema_version != 1:
            raise Rejection(4005, f"SchemaVersion {message.schema_version}")
        if message.created_date == 0:
            raise Rejection(4005, "CreatedDate is missing")
        if message.message_id.int == 0:
            raise Rejection(4005, "nil MessageId")
        if not message.digest_is_valid():
            raise Rejection(4006, f"bad payload digest on {message.message_type}")
        if message.message_type == MessageType.ACKNOWLEDGE:
            self._on_ack(message)
        elif message.message_type == MessageType.INPUT_STREAM_DATA:
            await self._on_input(message)
        else:
            raise Rejection(4005, f"client sent message type {message.message_type}")

    def _on_ack(self, message: ClientMessage) -> None:
        if message.sequence_number != 0 or message.flags != Flags.SYN | Flags.FIN:
            raise Rejection(4007, "acknowledge frame needs SequenceNumber 0 and Flags 3")
        if message.payload_type != PayloadType.ACKNOWLEDGE:
            raise Rejection(4007, f"acknowledge frame with payload type {message.payload_type}")
        content = json.loads(message.payload)
        if content.get("AcknowledgedMessageType") != MessageType.OUTPUT_STREAM_DATA:
            raise Rejection(4007, f"acknowledged a {content.get('AcknowledgedMessageType')}")
        if content.get("IsSequentialMessage") is not True:
            raise Rejection(4007, "IsSequentialMessage is not true")
        sequence = content.get("AcknowledgedMessageSequenceNumber")
        sent = self.sent.get(sequence) if isinstance(sequence, int) else None
        if sent is None or content.get("AcknowledgedMessageId") != str(sent.message.message_id):
            raise Rejection(4007, f"acknowledged a frame never sent (sequence {sequence})")
        if not sent.good_copy_sent:
            raise Rejection(4007, f"acknowledged frame {sequence} although its digest was wrong")
        assert isinstance(sequence, int)
        self.agent.acks[sequence] += 1
        self.agent.events.append(("ack", sequence))
        sent.acked.set()

    async def _on_input(self, message: ClientMessage) -> None:
        sequence = message.sequence_number
        if message.flags != Flags.NONE:
            raise Rejection(4008, f"input_stream_data with flags {message.flags}")
        if message.payload_type not in CLIENT_INPUT_TYPES:
            raise Rejection(4008, f"unexpected input payload type {message.payload_type}")
        if sequence in self.script.lose_input and sequence not in self.lost:
            self.lost.add(sequence)  # as if the network lost it: no ack, not processed
            self.agent.events.append(("lost", sequence))
            return
        if not self.script.ack_input:
            return
        await self._acknowledge_input(message)
        if sequence < self.expected_input_sequence or sequence in self.input_ahead:
            return  # a resend of a frame already taken
        if sequence > self.expected_input_sequence:
            self.input_ahead.add(sequence)  # the agent buffers it until the gap fills
        else:
            self.expected_input_sequence += 1 + take_run(self.input_ahead, sequence + 1)
        self.agent.events.append(("input", sequence))
        if message.payload_type == PayloadType.HANDSHAKE_RESPONSE:
            self._on_handshake_response(message)
        elif message.payload_type == PayloadType.ENC_CHALLENGE_RESPONSE:
            self.challenge_response = message.payload
            self.challenge_answered.set()

    async def _acknowledge_input(self, message: ClientMessage) -> None:
        ack = {
            "AcknowledgedMessageType": MessageType.INPUT_STREAM_DATA,
            "AcknowledgedMessageId": str(message.message_id),
            "AcknowledgedMessageSequenceNumber": message.sequence_number,
            "IsSequentialMessage": True,
        }
        frame = ClientMessage(
            message_type=MessageType.ACKNOWLEDGE,
            sequence_number=0,
            flags=Flags.SYN | Flags.FIN,
            payload_type=PayloadType.ACKNOWLEDGE,
            payload=json.dumps(ack).encode(),
            message_id=uuid.uuid5(uuid.NAMESPACE_URL, f"{self.script.session_id}/ack/{message.message_id}"),
            created_date=AGENT_CLOCK_MILLIS,
        )
        await self._send(encode(frame))

    def _on_handshake_response(self, message: ClientMessage) -> None:
        response = json.loads(message.payload)
        self.agent.handshake_response = response
        actions = response.get("ProcessedClientActions")
        if not isinstance(response.get("ClientVersion"), str) or not isinstance(actions, list):
            raise Rejection(4008, "malformed handshake response")
        self.handshake_answered.set()


def take_run(ahead: set[int], start: int) -> int:
    """Remove the consecutive run ``start, start + 1, ...`` from ``ahead``; its length."""
    count = 0
    while start + count in ahead:
        ahead.discard(start + count)
        count += 1
    return count
