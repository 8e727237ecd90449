"""What the fake SSM agent saw and sent: the transcript and the protocol events tests assert on."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

from tests.fakes.agent_script import (
    AgentScript,
)


@dataclass(frozen=True)
class Message:
    """One websocket message of the transcript."""

    sender: Literal["client", "agent"]
    connection: int
    at: float  # seconds since the first connection
    data: bytes | str


class AgentRecords:
    """The fake agent's records (its session writes them; the test thread reads them)."""

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
        self.encryption: Any = None  # the session's AgentEncryption, when encrypted
        self.challenge_answered_ok = False
        self.refusal: str | None = None  # why the agent ended an encrypted session's handshake

    @property
    def opening(self) -> dict[str, Any] | None:
        return self.openings[0] if self.openings else None

    def record(self, sender: Literal["client", "agent"], data: bytes | str) -> None:
        self.transcript.append(Message(sender, self.connections, time.monotonic() - self.started, data))
