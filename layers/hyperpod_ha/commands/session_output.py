"""What a command session's output frames add up to, and what its end means.

Payload type 1 is stdout (all of the output when the document merges the streams), 11
stderr, 12 the exit code (``EXIT_CODE: <n>``, sent only with separate streams). At
``channel_closed`` the collected output becomes a :class:`SessionOutput`, unless the end
says otherwise: stderr alone with no exit code is the agent's "Unable to start command"
(:class:`CommandNotStarted`); a reason from the service and no exit code is a session
cut short (:class:`SessionEndedByService`), never a normal result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hyperpod_ha.commands import CommandError, CommandNotStarted, ProtocolError, SessionEndedByService
from hyperpod_ha.commands.frames import PayloadType

# Bounded digits: int() refuses more than 4300 of them with a ValueError, not a ProtocolError.
_EXIT_CODE = re.compile(rb"^\s*EXIT_CODE:\s*(-?\d{1,10})\s*$")


@dataclass(frozen=True)
class SessionOutput:
    stdout: bytes
    stderr: bytes | None  # None: the agent never sent a stderr or exit-code frame (merged output)
    exit_code: int | None


class OutputCollector:
    def __init__(self, session_id: str, max_bytes: int) -> None:
        self._id = session_id
        self._max_bytes = max_bytes
        self._stdout = bytearray()
        self._stderr = bytearray()
        self._separate_streams = False
        self._exit_code: int | None = None
        self.seen = False

    def take(self, payload_type: int, payload: bytes) -> bool:
        """Collect one frame's payload; False when the payload type is not output."""
        if payload_type == PayloadType.OUTPUT:
            self.seen = True
            self._collect(self._stdout, payload)
        elif payload_type in (PayloadType.STDERR, PayloadType.ERROR):
            self._separate_streams = True
            self._collect(self._stderr, payload)
        elif payload_type == PayloadType.EXIT_CODE:
            self._separate_streams = True
            match = _EXIT_CODE.match(payload)
            if match is None:
                raise ProtocolError(f"session {self._id}: malformed exit code frame")
            self._exit_code = int(match.group(1))
        else:
            return False
        return True

    def _collect(self, buffer: bytearray, chunk: bytes) -> None:
        if len(self._stdout) + len(self._stderr) + len(chunk) > self._max_bytes:
            raise CommandError(f"session {self._id}: output exceeds {self._max_bytes} bytes")
        buffer.extend(chunk)

    def result(self, reason: str) -> SessionOutput:
        """The output once ``channel_closed`` came with ``reason`` (its ``Output``, maybe empty)."""
        if self._exit_code is None and self._stderr and not self._stdout:
            # In merged mode the agent reports a command it cannot start on stderr, nothing else.
            text = self._stderr.decode("utf-8", errors="replace").strip()[:300]
            raise CommandNotStarted(f"session {self._id}: the agent could not start the command: {text}")
        if reason and self._exit_code is None:
            raise SessionEndedByService(f"session {self._id} was ended before the command finished: {reason}")
        return SessionOutput(
            stdout=bytes(self._stdout),
            stderr=bytes(self._stderr) if self._separate_streams else None,
            exit_code=self._exit_code,
        )
