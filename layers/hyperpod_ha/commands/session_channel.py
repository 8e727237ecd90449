"""The client side of one Session Manager data channel, as AWS's plugin speaks it.

What it does, after ``aws/session-manager-plugin`` (``datachannel/streaming.go``): send
the opening JSON text frame with the session token; acknowledge every
``output_stream_data`` frame and put them back in sequence order (buffer those ahead,
drop resends of processed ones); answer the handshake (``session_handshake``) and keep
our input frames until the agent acknowledges them (``session_outgoing``); in an encrypted
session decrypt the output and answer the encryption challenge (``session_encryption``);
collect the output until ``channel_closed`` (``session_output``).
A text frame or a frame that does not decode is logged and skipped, never fatal. A
dropped connection is resumed (ResumeSession, new token, same StreamUrl). The wait for
the handshake has no limit of its own: the caller's deadline bounds the whole channel.

Deliberate differences from the plugin (see ``tests/unit/commands/test_plugin_fixtures.py``):
a resend of a frame already processed is acknowledged again (the plugin stays silent;
the agent ignores a second ack, and it stops a resend whose first ack was lost); no
terminal-size frame is sent (a non-interactive command has no terminal); an unknown
client action is answered with ``ActionStatus`` 3 (the plugin puts 3 in ``ActionResult``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Final

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from hyperpod_ha.commands import CommandError, ProtocolError, SessionEndedByService
from hyperpod_ha.commands.frames import (
    ClientMessage,
    Flags,
    FrameError,
    MessageType,
    PayloadType,
    acknowledgement,
    decode,
    encode,
)
from hyperpod_ha.commands.session_encryption import SessionCipher, SessionDataKeys
from hyperpod_ha.commands.session_handshake import answer_handshake
from hyperpod_ha.commands.session_outgoing import RESEND_TICK_SECONDS, OutgoingFrames
from hyperpod_ha.commands.session_output import OutputCollector, SessionOutput
from hyperpod_ha.json_input import load_json
from hyperpod_ha.observability import logger

# The plugin release whose behaviour this client reproduces; the agent adapts its features to it.
CLIENT_VERSION: Final = "1.2.650.0"
MAX_OUTPUT_BYTES: Final = 4 * 1024 * 1024
MAX_BUFFERED_FRAMES: Final = 10_000  # the plugin's IncomingMessageBufferCapacity
RECONNECT_ATTEMPTS: Final = 5  # the plugin's DataChannelNumMaxRetries
# A refused handshake waits this long for the agent to acknowledge our answer, then fails.
FAILURE_GRACE_SECONDS: Final = 2.0

# Frame-level debug logs of websockets would print the opening frame, which holds the
# session token: this logger stays at INFO whatever the root logger's level.
_WEBSOCKETS_LOGGER = logging.getLogger("hyperpod_ha.commands.websockets")
_WEBSOCKETS_LOGGER.setLevel(logging.INFO)

_UNCHECKED_DIGEST = frozenset({MessageType.START_PUBLICATION, MessageType.PAUSE_PUBLICATION})

# ResumeSession: a fresh token, or None when the session can no longer be resumed.
Resume = Callable[[], Awaitable[str | None]]


@dataclass(frozen=True)
class StartedSession:
    """What StartSession returned. The token is kept out of ``repr`` so it never reaches a log."""

    session_id: str
    token_value: str = field(repr=False)
    stream_url: str = field(repr=False)


def _now_millis() -> int:
    return time.time_ns() // 1_000_000


def _compact(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _json_object(payload: bytes) -> dict[str, object] | None:
    try:
        value = load_json(payload, ProtocolError, what="the frame's payload")
    except ProtocolError:
        return None
    return value if isinstance(value, dict) else None


class DataChannel:
    """One session's data channel (used once). ``new_uuid`` and ``now_millis`` are injectable
    so that tests can compare our frames byte for byte with those AWS's client sent."""

    @property
    def output_seen(self) -> bool:
        return self._output.seen

    def __init__(
        self,
        session: StartedSession,
        *,
        resume: Resume | None = None,
        max_output_bytes: int = MAX_OUTPUT_BYTES,
        client_version: str = CLIENT_VERSION,
        new_uuid: Callable[[], uuid.UUID] = uuid.uuid4,
        now_millis: Callable[[], int] = _now_millis,
        reconnect_delay: float = 0.1,
        target: str = "",
        data_keys: SessionDataKeys | None = None,
    ) -> None:
        self._session = session
        self._target = target
        self._data_keys = data_keys
        self._cipher: SessionCipher | None = None
        self._id = session.session_id
        self._resume = resume
        self._client_version = client_version
        self._new_uuid = new_uuid
        self._now_millis = now_millis
        self._reconnect_delay = reconnect_delay
        self._client_id = str(new_uuid())  # one per session, kept across reconnections
        self._websocket: ClientConnection | None = None
        self._reconnections = 0
        self._outgoing = OutgoingFrames()
        self._expected_sequence = 0
        self._ahead: dict[int, ClientMessage] = {}
        self._next_input_sequence = 0
        self._failure: CommandError | None = None
        self._failure_deadline = 0.0
        self._output = OutputCollector(self._id, max_output_bytes)
        self.handshake_seen = False

    async def run(self) -> SessionOutput:
        self._websocket = await self._open(self._session.token_value)
        try:
            return await self._converse()
        finally:
            await self._websocket.close()

    async def _open(self, token: str) -> ClientConnection:
        try:
            # No compression and no extra headers: the service expects what the plugin sends.
            # Pings keep NAT paths open; a missing pong must not kill a healthy session.
            websocket = await connect(
                self._session.stream_url,
                compression=None,
                open_timeout=None,
                ping_interval=60,
                ping_timeout=None,
                close_timeout=1,
                logger=_WEBSOCKETS_LOGGER,
            )
        except InvalidURI:
            raise ProtocolError("StartSession returned an unusable StreamUrl") from None
        except InvalidHandshake as error:
            raise ProtocolError(f"data channel refused the connection ({type(error).__name__})") from None
        except OSError as error:
            raise ProtocolError(f"could not connect to the data channel ({type(error).__name__})") from None
        opening = {
            "MessageSchemaVersion": "1.0",
            "RequestId": str(self._new_uuid()),
            "TokenValue": token,
            "ClientId": self._client_id,
            "ClientVersion": self._client_version,
        }
        try:
            await websocket.send(_compact(opening).decode())
        except ConnectionClosed:
            raise ProtocolError("data channel closed before the opening frame was sent") from None
        return websocket

    async def _converse(self) -> SessionOutput:
        loop = asyncio.get_running_loop()
        while True:
            try:
                raw = await self._receive(loop.time())
            except ConnectionClosed as closed:
                await self._reconnect(closed)
                continue
            if raw is not None:
                output = await self._on_raw(raw)
                if output is not None:
                    return output
            if self._failure is not None and (not self._outgoing or loop.time() >= self._failure_deadline):
                raise self._failure
            resend = self._outgoing.due(loop.time())
            if resend is not None:
                await self._send(resend)

    async def _receive(self, now: float) -> str | bytes | None:
        """The next websocket message, or None when a resend or the failure grace is due first."""
        assert self._websocket is not None
        waits = [RESEND_TICK_SECONDS] if self._outgoing else []
        if self._failure is not None:
            waits.append(max(0.0, self._failure_deadline - now))
        try:
            return await asyncio.wait_for(self._websocket.recv(), min(waits) if waits else None)
        except TimeoutError:
            return None

    async def _reconnect(self, closed: ConnectionClosed) -> None:
        code = closed.rcvd.code if closed.rcvd else "none"
        if self._resume is None:
            raise ProtocolError(
                f"session {self._id}: data channel closed before channel_closed (close code {code})"
            )
        logger.warning(
            "data channel dropped; resuming the session", extra={"session_id": self._id, "close_code": code}
        )
        self._reconnections += 1
        if self._reconnections > RECONNECT_ATTEMPTS:
            raise ProtocolError(f"session {self._id}: data channel dropped {RECONNECT_ATTEMPTS} times")
        delay = self._reconnect_delay
        for _ in range(RECONNECT_ATTEMPTS):
            token = await self._resume()
            if not token:
                raise SessionEndedByService(
                    f"session {self._id}: the data channel closed before channel_closed and the "
                    "session can no longer be resumed (timed out)"
                )
            try:
                self._websocket = await self._open(token)
            except ProtocolError:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            logger.info("data channel resumed", extra={"session_id": self._id})
            return
        raise ProtocolError(
            f"session {self._id}: data channel closed before channel_closed and "
            f"{RECONNECT_ATTEMPTS} reconnections failed"
        )

    async def _on_raw(self, raw: str | bytes) -> SessionOutput | None:
        if isinstance(raw, str):
            # The plugin logs and skips what it cannot parse; so do we.
            logger.warning("skipped a text message on the data channel", extra={"session_id": self._id})
            return None
        try:
            message = decode(raw)
        except FrameError as error:
            logger.warning(
                "skipped an undecodable frame", extra={"session_id": self._id, "reason": error.reason}
            )
            return None
        if (
            message.message_type not in _UNCHECKED_DIGEST
            and message.payload
            and not message.digest_is_valid()
        ):
            # Not acknowledged, so the agent sends it again (as the plugin's Validate does).
            logger.warning(
                "skipped a frame with a bad payload digest",
                extra={"session_id": self._id, "message_type": message.message_type},
            )
            return None
        if message.message_type == MessageType.CHANNEL_CLOSED:
            return self._closed(message)
        if message.message_type == MessageType.OUTPUT_STREAM_DATA:
            await self._on_output_stream_data(message)
        elif message.message_type == MessageType.ACKNOWLEDGE:
            self._on_acknowledge(message)
        else:
            # start/pause_publication and unknown types need nothing from us.
            logger.debug(
                "ignored data channel frame",
                extra={"session_id": self._id, "message_type": message.message_type},
            )
        return None

    def _on_acknowledge(self, message: ClientMessage) -> None:
        content = _json_object(message.payload)
        sequence = content.get("AcknowledgedMessageSequenceNumber") if content else None
        if not isinstance(sequence, int):
            logger.warning("skipped a malformed acknowledgement", extra={"session_id": self._id})
            return
        self._outgoing.acknowledged(sequence, asyncio.get_running_loop().time())

    def _closed(self, message: ClientMessage) -> SessionOutput:
        content = _json_object(message.payload) or {}
        detail = str(content.get("Output") or "")[:300]
        if self._failure is not None:
            raise self._failure
        if not self.handshake_seen and not self._output.seen:
            # The agent gave up before running anything (bad document properties, ...).
            raise ProtocolError(
                f"session {self._id} closed before the handshake" + (f": {detail}" if detail else "")
            )
        if self._ahead:
            raise ProtocolError(
                f"session {self._id} closed with output frames missing "
                f"from sequence number {self._expected_sequence}"
            )
        output = self._output.result(detail)
        if detail:
            logger.info("session closed with a message", extra={"session_id": self._id, "detail": detail})
        return output

    async def _on_output_stream_data(self, message: ClientMessage) -> None:
        sequence = message.sequence_number
        if sequence > self._expected_sequence and sequence not in self._ahead:
            if len(self._ahead) >= MAX_BUFFERED_FRAMES:
                return  # not acknowledged: the agent sends it again once the gap is filled
            self._ahead[sequence] = message
        await self._acknowledge(message)
        if sequence != self._expected_sequence:
            return  # ahead: buffered; behind: a resend of a frame already processed
        await self._process(message)
        self._expected_sequence += 1
        while self._expected_sequence in self._ahead:
            await self._process(self._ahead.pop(self._expected_sequence))
            self._expected_sequence += 1

    async def _acknowledge(self, message: ClientMessage) -> None:
        await self._send(encode(acknowledgement(message, self._new_uuid(), self._now_millis())))

    async def _process(self, message: ClientMessage) -> None:
        payload_type = message.payload_type
        payload = message.payload
        if self._cipher is not None and self._cipher.encrypts(payload_type) and payload:
            payload = self._decrypted(payload)
        if payload_type == PayloadType.HANDSHAKE_REQUEST:
            await self._answer_handshake(message)
        elif self._output.take(payload_type, payload):
            pass
        elif payload_type == PayloadType.ENC_CHALLENGE_REQUEST:
            if self._cipher is None:
                raise ProtocolError(f"session {self._id}: encryption challenge without agreed encryption")
            try:
                answer = self._cipher.answer_challenge(payload)
            except ProtocolError as error:
                raise ProtocolError(f"session {self._id}: {error.reason}") from None
            await self._send_input(PayloadType.ENC_CHALLENGE_RESPONSE, answer)
        else:
            # HandshakeComplete, Flag, Size, ...: nothing to do for a one-shot command.
            logger.debug(
                "ignored output payload", extra={"session_id": self._id, "payload_type": payload_type}
            )

    def _decrypted(self, payload: bytes) -> bytes:
        assert self._cipher is not None
        try:
            return self._cipher.decrypt(payload)
        except ProtocolError as error:
            raise ProtocolError(f"session {self._id}: {error.reason}") from None

    async def _answer_handshake(self, message: ClientMessage) -> None:
        if self._data_keys is None:
            answer = answer_handshake(message.payload, self._id, self._client_version)
        else:  # a KMSEncryption action calls KMS: off the event loop
            answer = await asyncio.to_thread(
                answer_handshake,
                message.payload,
                self._id,
                self._client_version,
                target=self._target,
                data_keys=self._data_keys,
            )
        self._cipher = answer.cipher
        self.handshake_seen = True
        await self._send_input(PayloadType.HANDSHAKE_RESPONSE, _compact(answer.response))
        if answer.failure is not None and self._failure is None:
            self._failure = answer.failure
            self._failure_deadline = asyncio.get_running_loop().time() + FAILURE_GRACE_SECONDS
        logger.debug(
            "answered the session handshake",
            extra={"session_id": self._id, "agent_version": answer.agent_version},
        )

    async def _send_input(self, payload_type: int, payload: bytes) -> None:
        frame = ClientMessage(
            message_type=MessageType.INPUT_STREAM_DATA,
            sequence_number=self._next_input_sequence,
            flags=Flags.NONE,
            payload_type=payload_type,
            payload=payload,
            message_id=self._new_uuid(),
            created_date=self._now_millis(),
        )
        data = encode(frame)
        self._outgoing.sent(frame.sequence_number, data, asyncio.get_running_loop().time())
        self._next_input_sequence += 1
        await self._send(data)

    async def _send(self, data: str | bytes) -> None:
        assert self._websocket is not None
        try:
            await self._websocket.send(data)
        except ConnectionClosed:
            # The reader sees the drop and resumes; unacknowledged input frames stay buffered.
            logger.debug("send on a closed data channel", extra={"session_id": self._id})
