"""Run one fixed command through Session Manager (the only way into HyperPod nodes).

``ssm.start_session`` opens a session for a Session document; the command's output then
comes over the session's websocket data channel, which this module speaks itself (see
``frames`` for the binary layout). The public :class:`SessionManagerRunner` is
synchronous; the data channel runs on ``asyncio`` inside it.

What the client does, in order: send the opening JSON text frame with the session token;
acknowledge every ``output_stream_data`` frame; put frames back in sequence order (buffer
those ahead, re-acknowledge and drop resends); answer the agent's handshake (session type
only; KMS encryption is refused); collect stdout (payload type 1), stderr (11) and the
exit code (12, ``EXIT_CODE: <n>``) until ``channel_closed``. Every failure after
StartSession terminates the session, so nothing is left running on the node.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from botocore.exceptions import BotoCoreError, ClientError
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from hyperpod_ha.commands import (
    CommandError,
    CommandRequest,
    CommandResult,
    CommandTimedOut,
    EncryptionRequired,
    HandshakeTimedOut,
    ProtocolError,
)
from hyperpod_ha.commands.aws_errors import client_error_code, command_error
from hyperpod_ha.commands.frames import ClientMessage, Flags, MessageType, PayloadType, decode, encode
from hyperpod_ha.observability import logger

if TYPE_CHECKING:
    from mypy_boto3_ssm import SSMClient

TRANSPORT: Final = "session-manager"
# The plugin version whose behaviour this client reproduces; the agent adapts its features to it.
CLIENT_VERSION: Final = "1.2.650.0"
HANDSHAKE_TIMEOUT_SECONDS: Final = 15.0
MAX_OUTPUT_BYTES: Final = 4 * 1024 * 1024
# Frames ahead of a gap are buffered; a gap this wide means a broken peer, not reordering.
MAX_BUFFERED_FRAMES: Final = 1024

# Frame-level debug logs of websockets would print the opening frame, which holds the
# session token: this logger stays at INFO whatever the root logger's level.
_WEBSOCKETS_LOGGER = logging.getLogger("hyperpod_ha.commands.websockets")
_WEBSOCKETS_LOGGER.setLevel(logging.INFO)

_COMMAND_SESSION_TYPES = frozenset({"NonInteractiveCommands", "InteractiveCommands"})
_EXIT_CODE = re.compile(rb"^\s*EXIT_CODE:\s*(-?\d+)\s*$")
_ACTION_SUCCESS = 1


@dataclass(frozen=True)
class StartedSession:
    """What StartSession returned. The token is kept out of ``repr`` so it never reaches a log."""

    session_id: str
    token_value: str = field(repr=False)
    stream_url: str = field(repr=False)


@dataclass(frozen=True)
class SessionOutput:
    stdout: bytes
    stderr: bytes | None  # None: the agent never sent a stderr or exit-code frame (merged output)
    exit_code: int | None


def _json_payload(message: ClientMessage, what: str) -> dict[str, Any]:
    try:
        value = json.loads(message.payload)
    except (UnicodeDecodeError, ValueError):
        raise ProtocolError(f"{what} payload is not JSON") from None
    if not isinstance(value, dict):
        raise ProtocolError(f"{what} payload is not a JSON object")
    return value


def _compact(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


class DataChannel:
    """The client side of one session's data channel (used once)."""

    def __init__(
        self,
        session: StartedSession,
        *,
        handshake_timeout: float = HANDSHAKE_TIMEOUT_SECONDS,
        max_output_bytes: int = MAX_OUTPUT_BYTES,
    ) -> None:
        self._session = session
        self._handshake_timeout = handshake_timeout
        self._max_output_bytes = max_output_bytes
        self._expected_sequence = 0
        self._ahead: dict[int, ClientMessage] = {}
        self._next_input_sequence = 0
        self._handshake_seen = False
        self._stdout = bytearray()
        self._stderr = bytearray()
        self._separate_streams = False
        self._exit_code: int | None = None

    async def run(self) -> SessionOutput:
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
        async with websocket:
            return await self._converse(websocket)

    async def _converse(self, websocket: ClientConnection) -> SessionOutput:
        opening = {
            "MessageSchemaVersion": "1.0",
            "RequestId": str(uuid.uuid4()),
            "TokenValue": self._session.token_value,
            "ClientId": str(uuid.uuid4()),
            "ClientVersion": CLIENT_VERSION,
        }
        await self._send(websocket, json.dumps(opening))
        loop = asyncio.get_running_loop()
        handshake_deadline = loop.time() + self._handshake_timeout
        while True:
            wait = None if self._handshake_seen else max(0.0, handshake_deadline - loop.time())
            try:
                raw = await asyncio.wait_for(websocket.recv(), wait)
            except TimeoutError:
                raise HandshakeTimedOut(
                    f"session {self._session.session_id}: no handshake from the agent within "
                    f"{self._handshake_timeout:g} s"
                ) from None
            except ConnectionClosed as closed:
                raise ProtocolError(
                    f"session {self._session.session_id}: data channel closed before channel_closed "
                    f"(close code {closed.rcvd.code if closed.rcvd else 'none'})"
                ) from None
            if isinstance(raw, str):
                raise ProtocolError(f"session {self._session.session_id}: unexpected text message")
            message = decode(raw)
            if message.message_type == MessageType.CHANNEL_CLOSED:
                return self._closed(message)
            if message.message_type == MessageType.OUTPUT_STREAM_DATA:
                await self._on_output_stream_data(websocket, message)
            else:
                # acknowledge (of our handshake response), start/pause_publication (we have
                # nothing more to send) and unknown types need nothing from us.
                logger.debug(
                    "ignored data channel frame",
                    extra={"session_id": self._session.session_id, "message_type": message.message_type},
                )

    def _closed(self, message: ClientMessage) -> SessionOutput:
        if not self._handshake_seen:
            # The agent gave up before running anything (bad document properties, ...).
            detail = ""
            with contextlib.suppress(ProtocolError):
                detail = str(_json_payload(message, "channel_closed").get("Output") or "")[:300]
            raise ProtocolError(
                f"session {self._session.session_id} closed before the handshake"
                + (f": {detail}" if detail else "")
            )
        if self._ahead:
            raise ProtocolError(
                f"session {self._session.session_id} closed with output frames missing "
                f"from sequence number {self._expected_sequence}"
            )
        return SessionOutput(
            stdout=bytes(self._stdout),
            stderr=bytes(self._stderr) if self._separate_streams else None,
            exit_code=self._exit_code,
        )

    async def _on_output_stream_data(self, websocket: ClientConnection, message: ClientMessage) -> None:
        if not message.digest_is_valid():
            # Not acknowledged, so the agent sends it again (as the plugin does).
            logger.warning(
                "dropped an output frame with a bad payload digest",
                extra={"session_id": self._session.session_id, "sequence_number": message.sequence_number},
            )
            return
        await self._acknowledge(websocket, message)
        sequence = message.sequence_number
        if sequence < self._expected_sequence:
            return  # a resend of a frame already processed: the new ack is all it needs
        if sequence > self._expected_sequence:
            if len(self._ahead) >= MAX_BUFFERED_FRAMES:
                raise ProtocolError(
                    f"session {self._session.session_id}: more than {MAX_BUFFERED_FRAMES} frames "
                    f"ahead of sequence number {self._expected_sequence}"
                )
            self._ahead.setdefault(sequence, message)
            return
        await self._process(websocket, message)
        self._expected_sequence += 1
        while self._expected_sequence in self._ahead:
            await self._process(websocket, self._ahead.pop(self._expected_sequence))
            self._expected_sequence += 1

    async def _acknowledge(self, websocket: ClientConnection, message: ClientMessage) -> None:
        content = {
            "AcknowledgedMessageType": MessageType.OUTPUT_STREAM_DATA,
            "AcknowledgedMessageId": str(message.message_id),
            "AcknowledgedMessageSequenceNumber": message.sequence_number,
            "IsSequentialMessage": True,
        }
        ack = ClientMessage(
            message_type=MessageType.ACKNOWLEDGE,
            sequence_number=0,
            flags=Flags.SYN | Flags.FIN,
            payload_type=PayloadType.ACKNOWLEDGE,
            payload=_compact(content),
        )
        await self._send(websocket, encode(ack))

    async def _process(self, websocket: ClientConnection, message: ClientMessage) -> None:
        payload_type = message.payload_type
        if payload_type == PayloadType.HANDSHAKE_REQUEST:
            await self._answer_handshake(websocket, message)
        elif payload_type == PayloadType.OUTPUT:
            self._collect(self._stdout, message.payload)
        elif payload_type in (PayloadType.STDERR, PayloadType.ERROR):
            self._separate_streams = True
            self._collect(self._stderr, message.payload)
        elif payload_type == PayloadType.EXIT_CODE:
            self._separate_streams = True
            match = _EXIT_CODE.match(message.payload)
            if match is None:
                raise ProtocolError(f"session {self._session.session_id}: malformed exit code frame")
            self._exit_code = int(match.group(1))
        elif payload_type == PayloadType.ENC_CHALLENGE_REQUEST:
            raise EncryptionRequired(
                f"session {self._session.session_id}: the agent sent an encryption challenge"
            )
        else:
            # HandshakeComplete, Flag, Size, ...: nothing to do for a one-shot command.
            logger.debug(
                "ignored output payload",
                extra={"session_id": self._session.session_id, "payload_type": payload_type},
            )

    def _collect(self, buffer: bytearray, chunk: bytes) -> None:
        if len(self._stdout) + len(self._stderr) + len(chunk) > self._max_output_bytes:
            raise CommandError(
                f"session {self._session.session_id}: output exceeds {self._max_output_bytes} bytes"
            )
        buffer.extend(chunk)

    async def _answer_handshake(self, websocket: ClientConnection, message: ClientMessage) -> None:
        request = _json_payload(message, "handshake request")
        actions = request.get("RequestedClientActions") or []
        if not isinstance(actions, list):
            raise ProtocolError(f"session {self._session.session_id}: malformed handshake request")
        processed = []
        for action in actions:
            if not isinstance(action, dict):
                raise ProtocolError(f"session {self._session.session_id}: malformed handshake action")
            action_type = action.get("ActionType")
            if action_type == "KMSEncryption":
                # Refused outright: answering needs kms:GenerateDataKey and AES-GCM framing, and a
                # session that waits for an answer that never comes would only hang.
                raise EncryptionRequired(
                    f"session {self._session.session_id}: Session Manager preferences require KMS "
                    "encryption, which this client does not support"
                )
            if action_type != "SessionType":
                raise ProtocolError(
                    f"session {self._session.session_id}: the agent asked for an unsupported "
                    f"client action {str(action_type)[:64]!r}"
                )
            parameters = action.get("ActionParameters")
            session_type = parameters.get("SessionType") if isinstance(parameters, dict) else None
            if session_type not in _COMMAND_SESSION_TYPES:
                raise ProtocolError(
                    f"session {self._session.session_id}: session type {str(session_type)[:64]!r} "
                    "does not run a command (use a NonInteractiveCommands document)"
                )
            processed.append(
                {
                    "ActionType": "SessionType",
                    "ActionStatus": _ACTION_SUCCESS,
                    "ActionResult": None,
                    "Error": "",
                }
            )
        response = {"ClientVersion": CLIENT_VERSION, "ProcessedClientActions": processed, "Errors": None}
        frame = ClientMessage(
            message_type=MessageType.INPUT_STREAM_DATA,
            sequence_number=self._next_input_sequence,
            flags=Flags.NONE,
            payload_type=PayloadType.HANDSHAKE_RESPONSE,
            payload=_compact(response),
        )
        self._next_input_sequence += 1
        self._handshake_seen = True
        await self._send(websocket, encode(frame))
        logger.debug(
            "answered the session handshake",
            extra={"session_id": self._session.session_id, "agent_version": request.get("AgentVersion")},
        )

    async def _send(self, websocket: ClientConnection, data: str | bytes) -> None:
        try:
            await websocket.send(data)
        except ConnectionClosed:
            raise ProtocolError(
                f"session {self._session.session_id}: data channel closed before channel_closed"
            ) from None


class SessionManagerRunner:
    """Runs a Session document (``sessionType: NonInteractiveCommands``) on a target.

    ``request.document`` is the Session document, ``request.parameters`` its parameters
    (``{"command": [...]}`` for ``AWS-StartNonInteractiveCommand``; nothing for a custom
    document that fixes its command). The deadline covers StartSession, the data channel
    and its close.
    """

    transport = TRANSPORT

    def __init__(
        self,
        ssm: SSMClient,
        *,
        handshake_timeout: float = HANDSHAKE_TIMEOUT_SECONDS,
        max_output_bytes: int = MAX_OUTPUT_BYTES,
    ) -> None:
        self._ssm = ssm
        self._handshake_timeout = handshake_timeout
        self._max_output_bytes = max_output_bytes

    def run(self, request: CommandRequest) -> CommandResult:
        started = time.monotonic()
        session = self._start_session(request)
        logger.info(
            "session started",
            extra={"session_id": session.session_id, "target": request.target, "document": request.document},
        )
        try:
            remaining = request.deadline_seconds - (time.monotonic() - started)
            if remaining <= 0:
                raise TimeoutError
            output = asyncio.run(self._channel(session, remaining))
        except TimeoutError:
            self._terminate(session)
            raise CommandTimedOut(
                f"session {session.session_id} on {request.target} did not finish within "
                f"{request.deadline_seconds:g} s"
            ) from None
        except BaseException:
            self._terminate(session)
            raise
        duration = time.monotonic() - started
        logger.info(
            "session finished",
            extra={"session_id": session.session_id, "exit_code": output.exit_code, "duration": duration},
        )
        return CommandResult(
            stdout=output.stdout.decode("utf-8", errors="replace"),
            stderr=None if output.stderr is None else output.stderr.decode("utf-8", errors="replace"),
            exit_code=output.exit_code,
            duration_seconds=duration,
            transport=TRANSPORT,
        )

    async def _channel(self, session: StartedSession, seconds: float) -> SessionOutput:
        async with asyncio.timeout(seconds):
            channel = DataChannel(
                session, handshake_timeout=self._handshake_timeout, max_output_bytes=self._max_output_bytes
            )
            return await channel.run()

    def _start_session(self, request: CommandRequest) -> StartedSession:
        parameters = {name: list(values) for name, values in request.parameters.items()}
        try:
            if parameters:
                response = self._ssm.start_session(
                    Target=request.target, DocumentName=request.document, Parameters=parameters
                )
            else:
                response = self._ssm.start_session(Target=request.target, DocumentName=request.document)
        except (ClientError, BotoCoreError) as error:
            raise command_error(error, "StartSession", request.target) from error
        try:
            return StartedSession(
                session_id=response["SessionId"],
                token_value=response["TokenValue"],
                stream_url=response["StreamUrl"],
            )
        except KeyError as missing:
            raise ProtocolError(f"StartSession response lacks {missing.args[0]}") from None

    def _terminate(self, session: StartedSession) -> None:
        try:
            self._ssm.terminate_session(SessionId=session.session_id)
        except ClientError as error:
            logger.warning(
                "could not terminate session",
                extra={"session_id": session.session_id, "error_code": client_error_code(error)},
            )
        except BotoCoreError as error:
            logger.warning(
                "could not terminate session",
                extra={"session_id": session.session_id, "error_type": type(error).__name__},
            )
        else:
            logger.info("session terminated", extra={"session_id": session.session_id})
