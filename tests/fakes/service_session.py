"""The Session Manager service stand-in's records: a session, a frame as it saw it, the messages it
makes, the document parameters as the agent takes them (``tests.fakes.ssm_service``)."""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.server import ServerConnection

from hyperpod_ha.commands.frames import ClientMessage, encode


class ApiError(Exception):
    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code, self.status = code, status


@dataclass(frozen=True)
class Frame:
    """One frame of a session's data channel as the service saw it."""

    sender: str  # "agent" or "client"
    at: float
    message_type: str
    sequence_number: int
    flags: int
    payload_type: int
    payload: bytes
    relayed: bool


@dataclass
class ServiceSession:
    session_id: str
    token: str
    target: str
    document: str
    agent: ServerConnection | None = None
    client: ServerConnection | None = None
    ended: str | None = None  # the channel_closed Output once the session ended
    agent_opened: asyncio.Event = field(default_factory=asyncio.Event)
    client_opened: asyncio.Event = field(default_factory=asyncio.Event)


def _message(message_type: str, payload: bytes, *, sequence: int = 0, flags: int = 0) -> bytes:
    return encode(
        ClientMessage(
            message_type=message_type,
            sequence_number=sequence,
            flags=flags,
            payload_type=0,
            payload=payload,
            message_id=uuid.uuid4(),
            created_date=time.time_ns() // 1_000_000,
        )
    )


def _string_parameters(definitions: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """Parameters as the agent takes them: a String as one string (the API's list form makes the
    agent fail), each checked against the document (unknown, pattern), as the service does."""
    values: dict[str, Any] = {}
    for name, value in given.items():
        definition = definitions.get(name)
        if definition is None:
            raise ApiError("InvalidDocument", f"parameter {name} is not in the document")
        items = [str(item) for item in (value if isinstance(value, list) else [value])]
        kind = definition.get("type", "String")
        if kind == "String" and len(items) != 1:
            raise ApiError("ValidationException", f"parameter {name} takes one value")
        pattern = definition.get("allowedPattern")
        if pattern and not all(re.search(pattern, item) for item in items):
            raise ApiError("ValidationException", f"parameter {name} does not match its allowedPattern")
        values[name] = items[0] if kind == "String" else items
    return values


def _json(payload: bytes) -> dict[str, Any]:
    try:
        value = json.loads(payload)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
