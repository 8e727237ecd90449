"""The agent side of Session Manager data channels, for the local stand-in (``hyperpod-ha local``).

A Lambda container cannot reach an in-process transport, but it can open a websocket: the
stand-in's StartSession runs the request on the simulated cluster at once (so an unreachable
controller is ``TargetNotConnected``, as in SSM) and returns a ``StreamUrl`` served here. The
session then plays what the SSM agent would: the handshake, stdout and stderr in frames of at
most 1024 bytes, the exit code, ``channel_closed`` once every frame was acknowledged. The
health check's own Session Manager client (``hyperpod_ha.commands.session_manager``) is what
talks to it, unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from hyperpod_ha.commands import CommandRequest, CommandResult
from hyperpod_ha.commands.frames import (
    ClientMessage,
    Flags,
    MessageType,
    PayloadType,
    acknowledgement,
    decode,
    encode,
)

CHUNK_BYTES = 1024
AGENT_VERSION = "3.3.1957.0"
ACK_SECONDS = 10.0
PATH_PREFIX = "/v1/data-channel/"


@dataclass
class _Session:
    session_id: str
    token: str = field(repr=False)
    result: CommandResult


@dataclass(frozen=True)
class OpenedSession:
    session_id: str
    token: str = field(repr=False)
    stream_url: str = field(repr=False)


class SessionAgent:
    """Serves the data channels of sessions opened with :meth:`open`, on ``host`` (random port)."""

    def __init__(self, host: str, run: Callable[[CommandRequest], CommandResult]) -> None:
        self._host = host
        self._run = run
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.Lock()
        self._port = 0
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=lambda: asyncio.run(self._serve()), daemon=True)

    def start(self) -> None:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the session agent did not start")

    def close(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def open(
        self, target: str, document: str, parameters: Mapping[str, list[str]], deadline_seconds: float
    ) -> OpenedSession:
        """Run the command now (raises the transport's errors); its output waits for the client."""
        result = self._run(CommandRequest(target, document, deadline_seconds, dict(parameters)))
        session = _Session(f"local-{uuid.uuid4().hex[:17]}", secrets.token_urlsafe(24), result)
        with self._lock:
            self._sessions[session.session_id] = session
        url = f"ws://{self._host}:{self._port}{PATH_PREFIX}{session.session_id}?role=publish_subscribe"
        return OpenedSession(session.session_id, session.token, url)

    def terminate(self, session_id: str) -> None:
        with self._lock:
            self._sessions.pop(session_id, None)

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        async with serve(self._handle, self._host, 0) as server:
            self._port = next(iter(server.sockets)).getsockname()[1]
            self._ready.set()
            await self._stop.wait()

    async def _handle(self, websocket: ServerConnection) -> None:
        path = websocket.request.path if websocket.request else ""
        session_id = path.removeprefix(PATH_PREFIX).split("?", 1)[0]
        with self._lock:
            session = self._sessions.pop(session_id, None)
        if session is None:
            await websocket.close(4004, "unknown session")
            return
        with contextlib.suppress(ConnectionClosed, TimeoutError):
            await _Channel(websocket, session).play()


class _Channel:
    def __init__(self, websocket: ServerConnection, session: _Session) -> None:
        self.websocket = websocket
        self.session = session
        self.sequence = 0
        self.unacknowledged: set[int] = set()
        self.acknowledged = asyncio.Event()
        self.handshake_answered = asyncio.Event()

    async def play(self) -> None:
        opening = json.loads(await asyncio.wait_for(self.websocket.recv(), ACK_SECONDS))
        if not secrets.compare_digest(str(opening.get("TokenValue", "")), self.session.token):
            await self.websocket.close(4003, "bad token")
            return
        reader = asyncio.create_task(self._read())
        try:
            handshake = {
                "AgentVersion": AGENT_VERSION,
                "RequestedClientActions": [
                    {
                        "ActionType": "SessionType",
                        "ActionParameters": {"SessionType": "NonInteractiveCommands", "Properties": {}},
                    }
                ],
            }
            await self._output(PayloadType.HANDSHAKE_REQUEST, json.dumps(handshake).encode(), Flags.SYN)
            await asyncio.wait_for(self.handshake_answered.wait(), ACK_SECONDS)
            complete = {"HandshakeTimeToComplete": 1_000_000, "CustomerMessage": ""}
            await self._output(PayloadType.HANDSHAKE_COMPLETE, json.dumps(complete).encode())
            result = self.session.result
            await self._chunks(PayloadType.OUTPUT, result.stdout.encode())
            if result.stderr is not None:
                await self._chunks(PayloadType.STDERR, result.stderr.encode())
            if result.exit_code is not None:
                await self._output(PayloadType.EXIT_CODE, f"EXIT_CODE: {result.exit_code}".encode())
            while self.unacknowledged:  # the agent drains its outgoing buffer before closing
                self.acknowledged.clear()
                await asyncio.wait_for(self.acknowledged.wait(), ACK_SECONDS)
            await self._channel_closed()
            await asyncio.wait_for(self.websocket.wait_closed(), ACK_SECONDS)
        finally:
            reader.cancel()

    async def _read(self) -> None:
        async for raw in self.websocket:
            if isinstance(raw, str):
                continue
            message = decode(raw)
            if message.message_type == MessageType.ACKNOWLEDGE:
                content = json.loads(message.payload)
                self.unacknowledged.discard(content.get("AcknowledgedMessageSequenceNumber"))
                self.acknowledged.set()
            elif message.message_type == MessageType.INPUT_STREAM_DATA:
                await self._acknowledge(message)
                if message.payload_type == PayloadType.HANDSHAKE_RESPONSE:
                    self.handshake_answered.set()

    async def _acknowledge(self, message: ClientMessage) -> None:
        ack = acknowledgement(message, uuid.uuid4(), int(time.time() * 1000))
        await self.websocket.send(encode(ack))

    async def _chunks(self, payload_type: int, data: bytes) -> None:
        for start in range(0, len(data), CHUNK_BYTES):
            await self._output(payload_type, data[start : start + CHUNK_BYTES])

    async def _output(self, payload_type: int, payload: bytes, flags: int = Flags.NONE) -> None:
        message = ClientMessage(
            message_type=MessageType.OUTPUT_STREAM_DATA,
            sequence_number=self.sequence,
            payload=payload,
            payload_type=payload_type,
            flags=flags,
        )
        self.unacknowledged.add(self.sequence)
        self.sequence += 1
        await self.websocket.send(encode(message))

    async def _channel_closed(self) -> None:
        content = {
            "MessageType": MessageType.CHANNEL_CLOSED,
            "MessageId": str(uuid.uuid4()),
            "CreatedDate": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
            "SessionId": self.session.session_id,
            "SchemaVersion": 1,
            "Output": "",
        }
        message = ClientMessage(
            message_type=MessageType.CHANNEL_CLOSED, sequence_number=0, payload=json.dumps(content).encode()
        )
        await self.websocket.send(encode(message))
