"""Frames we sent (``input_stream_data``), kept until the agent acknowledges them.

The plugin (``streaming.go``, ``config.go``) keeps every input frame in an outgoing
buffer and, on a 100 ms tick, sends the oldest one again once it has waited longer than
a retransmission timeout derived from the measured round trip (200 ms at first, at most
1 s); after 3000 resends it gives the session up. One lost HandshakeResponse would
otherwise lose the session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from hyperpod_ha.commands import ProtocolError

RESEND_TICK_SECONDS: Final = 0.1
MAX_RESENDS: Final = 3000
_INITIAL_TIMEOUT: Final = 0.2
_INITIAL_ROUND_TRIP: Final = 0.1
_CLOCK_GRANULARITY: Final = 0.01
_MAX_TIMEOUT: Final = 1.0
_RTT_GAIN: Final = 1 / 8
_RTT_VARIATION_GAIN: Final = 1 / 4


@dataclass
class _Pending:
    sequence_number: int
    data: bytes
    first_sent: float
    last_sent: float
    resends: int = 0


class OutgoingFrames:
    """The resend buffer; times are ``loop.time()`` seconds passed in by the caller."""

    def __init__(self) -> None:
        self._pending: dict[int, _Pending] = {}
        self._round_trip = _INITIAL_ROUND_TRIP
        self._variation = 0.0
        self.timeout = _INITIAL_TIMEOUT

    def __len__(self) -> int:
        return len(self._pending)

    def sent(self, sequence_number: int, data: bytes, now: float) -> None:
        self._pending[sequence_number] = _Pending(sequence_number, data, now, now)

    def acknowledged(self, sequence_number: int, now: float) -> bool:
        """Forget an acknowledged frame; False when it was not (or no longer) pending."""
        pending = self._pending.pop(sequence_number, None)
        if pending is None:
            return False
        # The plugin's smoothing (RFC 6298 constants), measured from the last transmission.
        sample = now - pending.last_sent
        self._variation = (1 - _RTT_VARIATION_GAIN) * self._variation + _RTT_VARIATION_GAIN * abs(
            self._round_trip - sample
        )
        self._round_trip = (1 - _RTT_GAIN) * self._round_trip + _RTT_GAIN * sample
        self.timeout = min(_MAX_TIMEOUT, self._round_trip + max(_CLOCK_GRANULARITY, 4 * self._variation))
        return True

    def due(self, now: float) -> bytes | None:
        """The oldest frame when it waited longer than the timeout (marked resent), else None."""
        if not self._pending:
            return None
        oldest = self._pending[min(self._pending)]
        if now - oldest.last_sent <= self.timeout:
            return None
        if oldest.resends >= MAX_RESENDS:
            raise ProtocolError(
                f"the agent never acknowledged input frame {oldest.sequence_number} ({MAX_RESENDS} resends)"
            )
        oldest.resends += 1
        oldest.last_sent = now
        return oldest.data
