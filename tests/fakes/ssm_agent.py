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
import threading
import time
from types import TracebackType

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from tests.fakes.agent_records import AgentRecords, Message
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
from tests.fakes.agent_session import AgentSession
from tests.fakes.session_state import Rejection

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


class FakeSsmAgent(AgentRecords):
    """Use as a context manager; :attr:`stream_url` is what StartSession should return. Its
    records (:class:`~tests.fakes.agent_records.AgentRecords`) are what tests assert on."""

    def __init__(self, script: AgentScript) -> None:
        super().__init__(script)
        self._session: AgentSession | None = None
        self._port = 0
        self._ready = threading.Event()
        self._handler_done = threading.Event()
        self._thread = threading.Thread(target=self._thread_main, name="fake-ssm-agent", daemon=True)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None

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
            self._session = AgentSession(self, websocket)
            await self._first_connection(self._session)
        elif self._session is not None:
            await self._session.attach(websocket)

    async def _first_connection(self, session: AgentSession) -> None:
        try:
            await session.play()
        except Rejection as rejection:
            self.errors.append(rejection.reason)
            with contextlib.suppress(ConnectionClosed):
                await session.websocket.close(rejection.code, rejection.reason[:100])
        except ConnectionClosed:
            self.client_went_away = True
        finally:
            session.stop()
            self._handler_done.set()
