"""A stand-in of the Session Manager service, between AWS's agent and the project's client.

One TLS port on 127.0.0.1 serves what both sides call (``../shared/session-manager.md``, "AWS's
agent, observed"):

- the agent's message gateway: ``POST /v1/control-channel/<instance>`` and ``/v1/data-channel/
  <session>`` (XML, 201) and their WebSockets; a session starts with an ``interactive_shell``
  message on the control channel (the document's content, its parameters as strings), the
  agent's ``agent_task_complete`` is answered with ``agent_task_acknowledge``;
- the data channel relay: ``output_stream_data`` and ``acknowledge`` agent to client,
  ``input_stream_data`` and ``acknowledge`` client to agent, byte for byte; frames the agent sends
  before the client is there are dropped (the agent resends until acknowledged), and the service
  makes ``channel_closed`` for the client when the agent's socket closes or on TerminateSession;
- the JSON APIs: SSM's StartSession, TerminateSession and ResumeSession for the client (with the
  checks of document parameters the service makes), the agent's own SSM and message-delivery
  calls (answered empty), KMS (``kms_standin``).

Every frame either side sends is recorded in :attr:`SessionService.frames` (per session: who sent
it, its header and payload) and every API call in :attr:`SessionService.api_calls`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import secrets
import threading
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from hyperpod_ha.commands.frames import ClientMessage, FrameError, MessageType, decode
from tests.fakes.kms_standin import KmsError, KmsStandIn
from tests.fakes.service_session import ApiError, Frame, ServiceSession, _json, _message, _string_parameters
from tests.fakes.tls_certificate import server_context, write_certificate

RELAYED_FROM_AGENT = frozenset({MessageType.OUTPUT_STREAM_DATA, MessageType.ACKNOWLEDGE})
RELAYED_FROM_CLIENT = frozenset({MessageType.INPUT_STREAM_DATA, MessageType.ACKNOWLEDGE})
MAX_HEAD = 64 * 1024
MAX_BODY = 1024 * 1024


class SessionService:
    """Use as a context manager (its loop runs in a thread). ``documents`` maps a document name to
    its content; ``session_key`` is the KMS key Session Manager's preferences name, if any."""

    def __init__(
        self, folder: Path, documents: Mapping[str, Mapping[str, Any]], *, session_key: str | None = None
    ) -> None:
        self.documents = documents
        self.session_key = session_key
        self.kms = KmsStandIn()
        self.certificate, self._key = write_certificate(folder)
        self.port = 0
        self.sessions: dict[str, ServiceSession] = {}
        self.frames: dict[str, list[Frame]] = {}
        self.control: list[tuple[str, str, dict[str, Any]]] = []  # (direction, type, payload)
        self.api_calls: list[tuple[str, dict[str, Any]]] = []
        self.agents: dict[str, ServerConnection] = {}
        self.agent_connected = threading.Event()
        self._started = 0.0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._main()), name="ssm-service", daemon=True
        )

    @property
    def endpoint(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def __enter__(self) -> SessionService:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the session service stand-in did not start")
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def wait_ended(self, session_id: str, timeout: float = 30) -> str | None:
        """The channel_closed Output once the session ended (None: not within ``timeout``)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            session = self.sessions.get(session_id)
            if session is not None and session.ended is not None:
                return session.ended
            time.sleep(0.05)
        return None

    # -- the servers (service thread) --

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        self._started = time.monotonic()
        async with serve(self._websocket, "127.0.0.1", 0, compression=None, max_size=2**22) as websockets:
            self._ws_port = next(iter(websockets.sockets)).getsockname()[1]
            front = await asyncio.start_server(
                self._front, "127.0.0.1", 0, ssl=server_context(self.certificate, self._key)
            )
            async with front:
                self.port = front.sockets[0].getsockname()[1]
                self._ready.set()
                await self._stop.wait()

    async def _front(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """HTTP requests answered here; WebSocket upgrades relayed to the WebSocket server."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        method, path, _ = ([*request_line.split(" "), "", ""])[:3]
        headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines if h)}
        if method == "GET":
            await self._relay(head, reader, writer)
            return
        length = min(int(headers.get("content-length") or 0), MAX_BODY)
        body = await reader.readexactly(length) if length else b""
        status, content_type, answer = await self._http(path, headers, body)
        reason = {200: "OK", 201: "Created"}.get(status, "Error")
        head = (
            f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {len(answer)}\r\n"
        )
        writer.write(head.encode() + b"Connection: close\r\n\r\n" + answer)
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        writer.close()

    async def _relay(self, head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self._ws_port)
        upstream_writer.write(head)

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            with contextlib.suppress(Exception):
                sink.close()

        await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))

    async def _http(self, path: str, headers: Mapping[str, str], body: bytes) -> tuple[int, str, bytes]:
        channel = re.match(r"^/v1/(control|data)-channel/([^/?]+)", path)
        if channel:
            output = "CreateControlChannelOutput" if channel[1] == "control" else "CreateDataChannelOutput"
            token = secrets.token_urlsafe(24)
            self.api_calls.append((f"ssmmessages.{output.removesuffix('Output')}", {"id": channel[2]}))
            xml = (
                f"<{output}><MessageSchemaVersion>1.0</MessageSchemaVersion>"
                f"<TokenValue>{token}</TokenValue></{output}>"
            )
            return 201, "application/xml", xml.encode()
        target = headers.get("x-amz-target", "")
        try:
            request = json.loads(body or b"{}")
            self.api_calls.append((target, request))
            answer = await self._api(target, request)
        except (ApiError, KmsError) as error:
            status = error.status if isinstance(error, ApiError) else 400
            return (
                status,
                "application/x-amz-json-1.1",
                json.dumps({"__type": error.code, "message": str(error)}).encode(),
            )
        return 200, "application/x-amz-json-1.1", json.dumps(answer).encode()

    async def _api(self, target: str, request: dict[str, Any]) -> dict[str, Any]:
        service, _, operation = target.partition(".")
        if service == "TrentService":
            return self.kms.handle(operation, request)
        if service == "AmazonSSM" and operation == "StartSession":
            return self._start_session(request)
        if service == "AmazonSSM" and operation in ("TerminateSession", "ResumeSession"):
            session = self.sessions.get(str(request.get("SessionId")))
            if session is None:
                raise ApiError("DoesNotExistException", "no such session")
            if operation == "TerminateSession":
                await self._end(session, "", terminate_agent=True)
                return {"SessionId": session.session_id}
            session.token = secrets.token_urlsafe(24)
            return {
                "SessionId": session.session_id,
                "TokenValue": session.token,
                "StreamUrl": self._stream(session),
            }
        if operation == "GetMessages":
            await asyncio.sleep(2)  # a long poll with nothing to deliver (sessions come over MGS)
            return {"Messages": [], "MessagesRequestId": str(uuid.uuid4())}
        return {}  # the agent's UpdateInstanceInformation, ListInstanceAssociations, ...

    def _stream(self, session: ServiceSession) -> str:
        return f"wss://127.0.0.1:{self.port}/v1/data-channel/{session.session_id}?role=publish_subscribe"

    def _start_session(self, request: dict[str, Any]) -> dict[str, Any]:
        target, name = str(request.get("Target")), str(request.get("DocumentName"))
        agent = self.agents.get(target)
        if agent is None:
            raise ApiError("TargetNotConnected", f"{target} is not connected.")
        content = self.documents.get(name)
        if content is None:
            raise ApiError("InvalidDocument", f"document {name} does not exist")
        parameters = _string_parameters(content.get("parameters") or {}, request.get("Parameters") or {})
        session = ServiceSession(
            f"hyperpod-ha-{uuid.uuid4().hex[:17]}", secrets.token_urlsafe(24), target, name
        )
        self.sessions[session.session_id] = session
        self.frames[session.session_id] = []
        document = dict(content)
        if self.session_key:
            document["inputs"] = {**(document.get("inputs") or {}), "kmsKeyId": self.session_key}
        task = {
            "DocumentName": name,
            "DocumentContent": document,
            "SessionId": session.session_id,
            "Parameters": parameters,
            "RunAsUser": "",
            "SessionOwner": "arn:aws:sts::111122223333:assumed-role/HealthCheckFunctionRole/hyperpod-ha",
        }
        envelope = {
            "Content": json.dumps(task),
            "TaskId": session.session_id,
            "Topic": "aws.ssm.startSession",
            "SchemaVersion": 1,
        }
        self.control.append(("to-agent", "interactive_shell", envelope))
        assert self._loop is not None
        self._loop.create_task(agent.send(_message("interactive_shell", json.dumps(envelope).encode())))
        return {
            "SessionId": session.session_id,
            "TokenValue": session.token,
            "StreamUrl": self._stream(session),
        }

    async def _end(self, session: ServiceSession, output: str, *, terminate_agent: bool) -> None:
        """The session's end: channel_closed for the client (and, on TerminateSession, the agent)."""
        if session.ended is not None:
            return
        session.ended = output
        closed = {
            "MessageType": MessageType.CHANNEL_CLOSED,
            "MessageId": str(uuid.uuid4()),
            "CreatedDate": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
            "DestinationId": session.target,
            "SessionId": session.session_id,
            "SchemaVersion": 1,
            "Output": output,
        }
        frame = _message(MessageType.CHANNEL_CLOSED, json.dumps(closed).encode())
        if terminate_agent and session.target in self.agents:
            self.control.append(("to-agent", MessageType.CHANNEL_CLOSED, closed))
            with contextlib.suppress(ConnectionClosed):
                await self.agents[session.target].send(frame)
        if session.client is not None:
            with contextlib.suppress(ConnectionClosed):
                await session.client.send(frame)
                await session.client.close()

    async def _websocket(self, websocket: ServerConnection) -> None:
        assert websocket.request is not None
        path = websocket.request.path
        channel = re.match(r"^/v1/(control|data)-channel/([^/?]+)\?(.*)$", path)
        if channel is None:
            await websocket.close(4004, "unknown path")
            return
        try:
            opening = json.loads(await asyncio.wait_for(websocket.recv(), 10))
        except (TimeoutError, ValueError, ConnectionClosed):
            await websocket.close(4001, "no opening frame")
            return
        if channel[1] == "control":
            await self._control_channel(websocket, channel[2], opening)
            return
        session = self.sessions.get(channel[2])
        if session is None:
            await websocket.close(4004, "no such session")
            return
        if "ClientInstanceId" in opening:
            await self._agent_data_channel(websocket, session)
        elif opening.get("TokenValue") == session.token:
            await self._client_data_channel(websocket, session)
        else:
            await websocket.close(4003, "bad token")

    async def _control_channel(
        self, websocket: ServerConnection, instance: str, opening: dict[str, Any]
    ) -> None:
        self.control.append(("from-agent", "open", {k: v for k, v in opening.items() if k != "TokenValue"}))
        self.agents[instance] = websocket
        self.agent_connected.set()
        with contextlib.suppress(ConnectionClosed):
            async for raw in websocket:
                message = self._decoded(raw)
                if message is None:
                    continue
                payload = _json(message.payload)
                self.control.append(("from-agent", message.message_type, payload))
                if message.message_type == "agent_task_complete":
                    ack = {
                        "SchemaVersion": 1,
                        "MessageId": str(message.message_id),
                        "TaskId": payload.get("TaskId"),
                        "Topic": payload.get("Topic"),
                    }
                    self.control.append(("to-agent", "agent_task_acknowledge", ack))
                    await websocket.send(_message("agent_task_acknowledge", json.dumps(ack).encode()))
        self.agents.pop(instance, None)

    async def _agent_data_channel(self, websocket: ServerConnection, session: ServiceSession) -> None:
        session.agent = websocket
        session.agent_opened.set()
        with contextlib.suppress(ConnectionClosed):
            async for raw in websocket:
                message = self._decoded(raw)
                if message is None:
                    continue
                relay = message.message_type in RELAYED_FROM_AGENT and session.client is not None
                self._record(session, "agent", message, relayed=relay)
                if relay:
                    assert session.client is not None
                    with contextlib.suppress(ConnectionClosed):
                        await session.client.send(raw)
        # The agent never sends channel_closed: the service makes it when the agent's side closes.
        await self._end(session, "", terminate_agent=False)

    async def _client_data_channel(self, websocket: ServerConnection, session: ServiceSession) -> None:
        session.client = websocket
        session.client_opened.set()
        if session.ended is not None:
            await self._end_late(session)
            return
        with contextlib.suppress(ConnectionClosed):
            async for raw in websocket:
                message = self._decoded(raw)
                if message is None:
                    continue
                relay = message.message_type in RELAYED_FROM_CLIENT and session.agent is not None
                self._record(session, "client", message, relayed=relay)
                if relay:
                    assert session.agent is not None
                    with contextlib.suppress(ConnectionClosed):
                        await session.agent.send(raw)

    async def _end_late(self, session: ServiceSession) -> None:
        session.ended, output = None, session.ended or ""
        await self._end(session, output, terminate_agent=False)

    def _decoded(self, raw: str | bytes) -> ClientMessage | None:
        if isinstance(raw, str):
            return None
        try:
            return decode(raw)
        except FrameError:
            return None

    def _record(self, session: ServiceSession, sender: str, message: ClientMessage, *, relayed: bool) -> None:
        self.frames[session.session_id].append(
            Frame(
                sender,
                time.monotonic() - self._started,
                message.message_type,
                message.sequence_number,
                int(message.flags),
                message.payload_type,
                message.payload,
                relayed,
            )
        )
