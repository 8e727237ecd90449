"""One session of the fake SSM agent: its state, sending, and waiting on the client."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from hyperpod_ha.commands.frames import (
    ClientMessage,
    PayloadType,
)
from tests.fakes.agent_records import AgentRecords

CHUNK_SIZE = 1024
AGENT_VERSION = "3.3.1957.0"
AGENT_CLOCK_MILLIS = 1_764_460_800_000  # the agent's frames carry this date plus their sequence number
# Input payload types AWS's client sends: stdin bytes, terminal size, the handshake response.
CLIENT_INPUT_TYPES = frozenset(
    {PayloadType.OUTPUT, PayloadType.SIZE, PayloadType.HANDSHAKE_RESPONSE, PayloadType.ENC_CHALLENGE_RESPONSE}
)


@dataclass
class SentFrame:
    message: ClientMessage
    data: bytes
    acked: asyncio.Event = field(default_factory=asyncio.Event)
    good_copy_sent: bool = True


class Rejection(Exception):
    """The client broke the protocol; the connection is closed with ``code``."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


class SessionState:
    """A session's state; the agent's records are written to ``agent``."""

    def __init__(self, agent: AgentRecords, websocket: ServerConnection) -> None:
        self.agent = agent
        self.script = agent.script
        self.websocket = websocket
        self.sent: dict[int, SentFrame] = {}
        self.next_sequence = 0
        self.expected_input_sequence = 0
        self.input_ahead: set[int] = set()
        self.lost: set[int] = set()
        self.handshake_answered = asyncio.Event()
        self.challenge_answered = asyncio.Event()
        self.challenge_response = b""
        self.client_gone = asyncio.Event()
        self.reconnected = asyncio.Event()
        self.finished = asyncio.Event()
        self.dropping = False
        self.rejection: Rejection | None = None
        self.tasks: list[asyncio.Task[None]] = []

    def stop(self) -> None:
        self.finished.set()
        for task in self.tasks:
            task.cancel()

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

    async def _send(self, data: bytes | str) -> None:
        self.agent.record("agent", data)
        with contextlib.suppress(ConnectionClosed):
            await self.websocket.send(data)
