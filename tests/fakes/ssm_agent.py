"""A strict fake of the agent side of a Session Manager data channel.

It serves websockets on 127.0.0.1 (random port) in a background thread and plays a
script as AWS's agent would: the handshake (possibly late), output in 1024-byte chunks,
frames out of order, resends until acknowledged, a resend of an acknowledged frame,
stderr and exit-code frames, text frames, ``channel_closed`` (with the service's reason
when it ends the session), a dropped connection the client may resume, a KMS request.

It refuses what AWS's client (``aws/session-manager-plugin``) never sends: a bad opening
frame or token, an undecodable frame, HeaderLength other than 116, a bad digest, an
acknowledgement that is not ``SequenceNumber 0, Flags 3, PayloadType 0`` or of something
never sent, an input payload type other than those the plugin sends, any other message
type. A refusal is recorded in :attr:`FakeSsmAgent.errors` and the connection is closed
with a 4xxx code; tests assert ``errors == []``. It tolerates what the plugin does send:
resent input frames, a terminal-size frame, stdin bytes, no second ack for a resend.

Every message either side sends is kept in :attr:`FakeSsmAgent.transcript`; the agent's
message ids and dates are derived from the session id and sequence number, so that two
clients facing one script get the same frames (``tests/fixtures/session_manager``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal

from websockets.asyncio.server import ServerConnection, serve
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
from tests.fakes.agent_script import (
    AgentScript,
    ChannelClosed,
    Drop,
    Garbage,
    Hang,
    Output,
    Pause,
    Reordered,
    ResendAcked,
    ServiceFrame,
    Step,
    UnknownFrame,
    exit_code,
    stderr,
    stdout,
)

__all__ = [
    "AgentScript",
    "ChannelClosed",
    "Drop",
    "FakeSsmAgent",
    "Garbage",
    "Hang",
    "Message",
    "Output",
    "Pause",
    "Reordered",
    "ResendAcked",
    "ServiceFrame",
    "Step",
    "UnknownFrame",
    "exit_code",
    "stderr",
    "stdout",
]

CHUNK_SIZE = 1024
AGENT_VERSION = "3.3.1957.0"
AGENT_CLOCK_MILLIS = 1_764_460_800_000  # the agent's frames carry this date plus their sequence number
# Input payload types AWS's client sends: stdin bytes, terminal size, the handshake response.
_CLIENT_INPUT_TYPES = frozenset({PayloadType.OUTPUT, PayloadType.SIZE, PayloadType.HANDSHAKE_RESPONSE})


# --- the fake -----------------------------------------------------------------------


@dataclass(frozen=True)
class Message:
    """One websocket message of the transcript."""

    sender: Literal["client", "agent"]
    connection: int
    at: float  # seconds since the first connection
    data: bytes | str


@dataclass
class _Sent:
    message: ClientMessage
    data: bytes
    acked: asyncio.Event = field(default_factory=asyncio.Event)
    good_copy_sent: bool = True


class _Reject(Exception):
    """The client broke the protocol; the connection is closed with ``code``."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


class FakeSsmAgent:
    """Use as a context manager; :attr:`stream_url` is what StartSession should return."""

    def __init__(self, script: AgentScript) -> None:
        self.script = script
        self.errors: list[str] = []
        self.events: list[tuple[str, int]] = []  # ("sent"|"ack"|"input"|"lost", sequence number)
        self.acks: Counter[int] = Counter()
        self.openings: list[dict[str, Any]] = []
        self.handshake_response: dict[str, Any] | None = None
        self.request_headers: dict[str, str] = {}
        self.transcript: list[Message] = []
        self.connections = 0
        self.client_went_away = False
        self.started = 0.0  # time.monotonic() of the first connection
        self._session: _AgentSession | None = None
        self._port = 0
        self._ready = threading.Event()
        self._handler_done = threading.Event()
        self._thread = threading.Thread(target=self._thread_main, name="fake-ssm-agent", daemon=True)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None

    @property
    def opening(self) -> dict[str, Any] | None:
        return self.openings[0] if self.openings else None

    # -- lifecycle (test thread) --

    def __enter__(self) -> FakeSsmAgent:
        self._thread.start()
        if not self._ready.wait(5):
            raise RuntimeError("fake SSM agent did not start")
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(5)

    @property
    def stream_url(self) -> str:
        return f"ws://127.0.0.1:{self._port}/v1/data-channel/{self.script.session_id}?role=publish_subscribe"

    def wait_done(self, timeout: float = 3.0) -> bool:
        """Wait until the session handler finished (the test then reads the records)."""
        return self._handler_done.wait(timeout)

    def record(self, sender: Literal["client", "agent"], data: bytes | str) -> None:
        self.transcript.append(Message(sender, self.connections, time.monotonic() - self.started, data))

    # -- the server (agent thread) --

    def _thread_main(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        async with serve(self._handle, "127.0.0.1", 0) as server:
            self._port = next(iter(server.sockets)).getsockname()[1]
            self._ready.set()
            await self._stop.wait()

    async def _handle(self, websocket: ServerConnection) -> None:
        self.connections += 1
        if self.connections == 1:
            self.started = time.monotonic()
            self._session = _AgentSession(self, websocket)
            await self._first_connection(self._session)
        elif self._session is not None:
            await self._session.attach(websocket)

    async def _first_connection(self, session: _AgentSession) -> None:
        try:
            await session.play()
        except _Reject as rejection:
            self.errors.append(rejection.reason)
            with contextlib.suppress(ConnectionClosed):
                await session.websocket.close(rejection.code, rejection.reason[:100])
        except ConnectionClosed:
            self.client_went_away = True
        finally:
            session.stop()
            self._handler_done.set()


class _AgentSession:
    def __init__(self, agent: FakeSsmAgent, websocket: ServerConnection) -> None:
        self.agent = agent
        self.script = agent.script
        self.websocket = websocket
        self.sent: dict[int, _Sent] = {}
        self.next_sequence = 0
        self.expected_input_sequence = 0
        self.input_ahead: set[int] = set()
        self.lost: set[int] = set()
        self.handshake_answered = asyncio.Event()
        self.client_gone = asyncio.Event()
        self.reconnected = asyncio.Event()
        self.finished = asyncio.Event()
        self.dropping = False
        self.rejection: _Reject | None = None
        self.tasks: list[asyncio.Task[None]] = []

    def stop(self) -> None:
        self.finished.set()
        for task in self.tasks:
            task.cancel()

    async def play(self) -> None:
        await self._accept(self.websocket, self.script.token, first=True)
        if self.script.send_handshake:
            if self.script.handshake_delay:
                await self._checked(
                    asyncio.sleep(self.script.handshake_delay), self.script.handshake_delay + 1
                )
            if not await self._handshake():
                return
        for step in self.script.steps:
            if await self._play(step):
                return
        await self._until_client_gone()

    async def attach(self, websocket: ServerConnection) -> None:
        """A reconnection (after ResumeSession): the session goes on over ``websocket``."""
        try:
            if not self.dropping or self.script.resume_token is None:
                raise _Reject(4011, "unexpected second connection")
            await self._accept(websocket, self.script.resume_token, first=False)
        except _Reject as rejection:
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
            raise _Reject(4004, f"unexpected path {request.path}")
        if "Sec-WebSocket-Extensions" in request.headers:
            raise _Reject(4000, "client offered websocket extensions")
        opening = await self._read_opening(websocket, token)
        if not first and opening.get("ClientId") != self.agent.openings[0].get("ClientId"):
            raise _Reject(4001, "ClientId changed on reconnection")
        self.tasks.append(asyncio.create_task(self._read(websocket)))

    async def _checked(self, awaitable: Any, seconds: float) -> bool:
        """Await with a timeout, surfacing a rejection found by the reader. True if done in time."""
        waiter = asyncio.ensure_future(awaitable)
        gone = asyncio.ensure_future(self.client_gone.wait())
        done, _ = await asyncio.wait({waiter, gone}, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
        gone.cancel()
        if not waiter.done():
            waiter.cancel()
        if self.rejection is not None:
            raise self.rejection
        if self.client_gone.is_set() and waiter not in done:
            raise ConnectionClosed(None, None)
        return waiter in done

    async def _until_client_gone(self) -> None:
        await self._checked(asyncio.sleep(self.script.patience), self.script.patience)

    # -- what the client sends --

    async def _read_opening(self, websocket: ServerConnection, token: str) -> dict[str, Any]:
        try:
            first = await asyncio.wait_for(websocket.recv(), 2)
        except TimeoutError:
            raise _Reject(4001, "no opening message") from None
        self.agent.record("client", first)
        if not isinstance(first, str):
            raise _Reject(4001, "opening message is not a text frame")
        try:
            opening = json.loads(first)
        except ValueError:
            raise _Reject(4001, "opening message is not JSON") from None
        if not isinstance(opening, dict):
            raise _Reject(4001, "opening message is not a JSON object")
        self.agent.openings.append(opening)
        if opening.get("TokenValue") != token:
            raise _Reject(4003, "bad token")
        if opening.get("MessageSchemaVersion") != "1.0":
            raise _Reject(4001, "bad MessageSchemaVersion")
        for key in ("RequestId", "ClientId"):
            try:
                uuid.UUID(str(opening.get(key)))
            except ValueError:
                raise _Reject(4001, f"{key} is not a UUID") from None
        if not isinstance(opening.get("ClientVersion"), str):
            raise _Reject(4001, "ClientVersion missing")
        return opening

    async def _read(self, websocket: ServerConnection) -> None:
        try:
            async for raw in websocket:
                self.agent.record("client", raw)
                if isinstance(raw, str):
                    raise _Reject(4001, "text message after the opening")
                await self._on_frame(raw)
        except _Reject as rejection:
            self.rejection = rejection
        except ConnectionClosed:
            pass
        except (ValueError, TypeError, AttributeError) as error:  # malformed JSON payloads and the like
            self.rejection = _Reject(4005, f"malformed frame content ({type(error).__name__})")
        if websocket is self.websocket and (self.rejection is not None or not self.dropping):
            self.client_gone.set()

    async def _on_frame(self, raw: bytes) -> None:
        try:
            message = decode(raw)
        except FrameError as error:
            raise _Reject(4005, f"undecodable frame: {error.reason}") from None
        if message.header_length != HEADER_LENGTH:
            raise _Reject(4005, f"HeaderLength {message.header_length}")
        if message.schema_version != 1:
            raise _Reject(4005, f"SchemaVersion {message.schema_version}")
        if message.created_date == 0:
            raise _Reject(4005, "CreatedDate is missing")
        if message.message_id.int == 0:
            raise _Reject(4005, "nil MessageId")
        if not message.digest_is_valid():
            raise _Reject(4006, f"bad payload digest on {message.message_type}")
        if message.message_type == MessageType.ACKNOWLEDGE:
            self._on_ack(message)
        elif message.message_type == MessageType.INPUT_STREAM_DATA:
            await self._on_input(message)
        else:
            raise _Reject(4005, f"client sent message type {message.message_type}")

    def _on_ack(self, message: ClientMessage) -> None:
        if message.sequence_number != 0 or message.flags != Flags.SYN | Flags.FIN:
            raise _Reject(4007, "acknowledge frame needs SequenceNumber 0 and Flags 3")
        if message.payload_type != PayloadType.ACKNOWLEDGE:
            raise _Reject(4007, f"acknowledge frame with payload type {message.payload_type}")
        content = json.loads(message.payload)
        if content.get("AcknowledgedMessageType") != MessageType.OUTPUT_STREAM_DATA:
            raise _Reject(4007, f"acknowledged a {content.get('AcknowledgedMessageType')}")
        if content.get("IsSequentialMessage") is not True:
            raise _Reject(4007, "IsSequentialMessage is not true")
        sequence = content.get("AcknowledgedMessageSequenceNumber")
        sent = self.sent.get(sequence) if isinstance(sequence, int) else None
        if sent is None or content.get("AcknowledgedMessageId") != str(sent.message.message_id):
            raise _Reject(4007, f"acknowledged a frame never sent (sequence {sequence})")
        if not sent.good_copy_sent:
            raise _Reject(4007, f"acknowledged frame {sequence} although its digest was wrong")
        assert isinstance(sequence, int)
        self.agent.acks[sequence] += 1
        self.agent.events.append(("ack", sequence))
        sent.acked.set()

    async def _on_input(self, message: ClientMessage) -> None:
        sequence = message.sequence_number
        if message.flags != Flags.NONE:
            raise _Reject(4008, f"input_stream_data with flags {message.flags}")
        if message.payload_type not in _CLIENT_INPUT_TYPES:
            raise _Reject(4008, f"unexpected input payload type {message.payload_type}")
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
            self.expected_input_sequence += 1 + _take_run(self.input_ahead, sequence + 1)
        self.agent.events.append(("input", sequence))
        if message.payload_type == PayloadType.HANDSHAKE_RESPONSE:
            self._on_handshake_response(message)

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
            raise _Reject(4008, "malformed handshake response")
        self.handshake_answered.set()

    # -- what the agent sends --

    async def _send(self, data: bytes | str) -> None:
        self.agent.record("agent", data)
        with contextlib.suppress(ConnectionClosed):
            await self.websocket.send(data)

    async def _handshake(self) -> bool:
        """Play the handshake; False when the client refused an action and the session ended."""
        actions: list[dict[str, Any]] = [
            {
                "ActionType": "SessionType",
                "ActionParameters": {
                    "SessionType": self.script.session_type,
                    "Properties": {"commands": "sh -c 'probe'", "runAsElevated": True},
                },
            }
        ]
        if self.script.kms_key_id is not None:
            actions.append(
                {"ActionType": "KMSEncryption", "ActionParameters": {"KMSKeyId": self.script.kms_key_id}}
            )
        actions.extend(self.script.extra_actions)
        request = {"AgentVersion": AGENT_VERSION, "RequestedClientActions": actions}
        await self._send_output(PayloadType.HANDSHAKE_REQUEST, json.dumps(request).encode(), flags=Flags.SYN)
        if not await self._checked(self.handshake_answered.wait(), self.script.handshake_response_timeout):
            raise _Reject(4009, "no handshake response")
        response = self.agent.handshake_response or {}
        refused = [a for a in response.get("ProcessedClientActions") or [] if a.get("ActionStatus") != 1]
        if refused or len(response.get("ProcessedClientActions") or []) != len(actions):
            # As the agent does: a session whose client cannot do what it asks ends, with the reason.
            await self._play_channel_closed(
                ChannelClosed(output=f"Handshake failed: {response.get('Errors')}")
            )
            return False
        complete = {"HandshakeTimeToComplete": 1_500_000, "CustomerMessage": ""}
        await self._send_output(PayloadType.HANDSHAKE_COMPLETE, json.dumps(complete).encode())
        return True

    def _frame(self, payload_type: int, payload: bytes, flags: int = Flags.NONE) -> ClientMessage:
        sequence = self.next_sequence
        self.next_sequence += 1
        return ClientMessage(
            message_type=MessageType.OUTPUT_STREAM_DATA,
            sequence_number=sequence,
            payload=payload,
            payload_type=payload_type,
            flags=flags,
            message_id=uuid.uuid5(uuid.NAMESPACE_URL, f"{self.script.session_id}/output/{sequence}"),
            created_date=AGENT_CLOCK_MILLIS + sequence,
        )

    async def _send_output(
        self, payload_type: int, payload: bytes, *, flags: int = Flags.NONE, corrupt: bool = False
    ) -> None:
        await self._emit(self._frame(payload_type, payload, flags), corrupt=corrupt)

    async def _emit(self, message: ClientMessage, *, corrupt: bool = False) -> None:
        sent = _Sent(message, encode(message), good_copy_sent=not corrupt)
        self.sent[message.sequence_number] = sent
        self.agent.events.append(("sent", message.sequence_number))
        first = encode(_with_digest(message, b"\x00" * 32)) if corrupt else sent.data
        await self._send(first)
        self.tasks.append(asyncio.create_task(self._redeliver(sent)))

    async def _redeliver(self, sent: _Sent) -> None:
        """Resend until acknowledged, as the agent does (the session's end stops it)."""
        while not sent.acked.is_set() and not self.client_gone.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(sent.acked.wait(), self.script.resend_interval)
            if sent.acked.is_set() or self.client_gone.is_set() or self.dropping:
                continue
            sent.good_copy_sent = True
            await self._send(sent.data)

    async def _play(self, step: Step) -> bool:
        """Play one step; True when the session is over."""
        match step:
            case Output():
                for index, chunk in enumerate(_chunks(step.data)):
                    await self._send_output(
                        step.payload_type, chunk, corrupt=step.corrupt_first_send and index == 0
                    )
            case Reordered():
                messages = [
                    self._frame(s.payload_type, chunk) for s in step.steps for chunk in _chunks(s.data)
                ]
                for position, index in enumerate(step.order):
                    if position:
                        await asyncio.sleep(step.gap)
                    await self._emit(messages[index])
            case ResendAcked():
                sent = self.sent[step.sequence_number]
                await self._checked(sent.acked.wait(), self.script.patience)
                self.agent.events.append(("sent", step.sequence_number))
                await self._send(sent.data)
            case ServiceFrame() | UnknownFrame():
                await self._send(encode(_loose_frame(step)))
            case Garbage():
                await self._send(step.data)
            case Pause():
                await self._checked(asyncio.sleep(step.seconds), step.seconds + 1)
            case ChannelClosed():
                await self._play_channel_closed(step)
                return True
            case Drop():
                return await self._play_drop(step)
            case Hang():
                await self._until_client_gone()
                return True
        return False

    async def _play_drop(self, step: Drop) -> bool:
        self.dropping = step.resume
        if step.abort:
            self.websocket.transport.abort()
        else:
            await self.websocket.close(1011, "agent went away")
        if not step.resume:
            return True
        if not await self._checked(self.reconnected.wait(), self.script.patience):
            raise _Reject(4011, "the client did not reconnect")
        return False

    async def _play_channel_closed(self, step: ChannelClosed) -> None:
        if step.drain:  # the agent drains its outgoing buffer before closing
            for sent in list(self.sent.values()):
                await self._checked(sent.acked.wait(), self.script.patience)
        content = {
            "MessageType": MessageType.CHANNEL_CLOSED,
            "MessageId": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{self.script.session_id}/closed")),
            "CreatedDate": "2025-11-30T00:00:00.000Z",
            "DestinationId": "mi-0123456789abcdef0",
            "SessionId": self.script.session_id,
            "SchemaVersion": 1,
            "Output": step.output,
        }
        message = ClientMessage(
            message_type=MessageType.CHANNEL_CLOSED,
            sequence_number=0,
            payload=json.dumps(content).encode(),
            payload_type=0,
            message_id=uuid.uuid5(uuid.NAMESPACE_URL, f"{self.script.session_id}/channel_closed"),
            created_date=AGENT_CLOCK_MILLIS,
        )
        await self._send(encode(message))
        await self._until_client_gone()


def _take_run(ahead: set[int], start: int) -> int:
    """Remove the consecutive run ``start, start + 1, ...`` from ``ahead``; its length."""
    count = 0
    while start + count in ahead:
        ahead.discard(start + count)
        count += 1
    return count


def _chunks(data: bytes) -> list[bytes]:
    return [data[start : start + CHUNK_SIZE] for start in range(0, len(data), CHUNK_SIZE)] or [b""]


def _loose_frame(step: ServiceFrame | UnknownFrame) -> ClientMessage:
    """A frame outside the output sequence; the client must neither process nor acknowledge it."""
    return ClientMessage(
        message_type=step.message_type,
        sequence_number=0,
        payload=step.payload,
        payload_type=0,
        message_id=uuid.uuid5(uuid.NAMESPACE_URL, f"{step.message_type}/{step.payload!r}"),
        created_date=AGENT_CLOCK_MILLIS,
    )


def _with_digest(message: ClientMessage, digest: bytes) -> ClientMessage:
    return ClientMessage(
        message_type=message.message_type,
        sequence_number=message.sequence_number,
        payload=message.payload,
        payload_type=message.payload_type,
        flags=message.flags,
        message_id=message.message_id,
        created_date=message.created_date,
        payload_digest=digest,
    )
