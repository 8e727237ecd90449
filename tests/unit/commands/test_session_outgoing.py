"""The resend buffer of our input frames (the plugin's outgoing buffer, streaming.go)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hyperpod_ha.commands import ProtocolError
from hyperpod_ha.commands.session_outgoing import MAX_RESENDS, OutgoingFrames


def test_a_frame_is_resent_after_the_timeout_until_acknowledged() -> None:
    outgoing = OutgoingFrames()
    outgoing.sent(0, b"response", now=10.0)

    assert outgoing.due(10.2) is None  # 200 ms at first, as the plugin's DefaultTransmissionTimeout
    assert outgoing.due(10.21) == b"response"
    assert outgoing.due(10.3) is None  # the timer restarts at each resend
    assert outgoing.due(10.42) == b"response"
    assert outgoing.acknowledged(0, now=10.45)
    assert outgoing.due(20.0) is None
    assert len(outgoing) == 0
    assert not outgoing.acknowledged(0, now=10.5)  # a second ack of the same frame is ignored


def test_the_oldest_frame_goes_first() -> None:
    outgoing = OutgoingFrames()
    outgoing.sent(1, b"one", now=0.0)
    outgoing.sent(0, b"zero", now=0.0)

    assert outgoing.due(1.0) == b"zero"


def test_a_frame_never_acknowledged_gives_the_session_up() -> None:
    outgoing = OutgoingFrames()
    outgoing.sent(0, b"response", now=0.0)
    now = 0.0
    for _ in range(MAX_RESENDS):
        now += 1.1
        assert outgoing.due(now) == b"response"

    with pytest.raises(ProtocolError, match=f"never acknowledged input frame 0 \\({MAX_RESENDS} resends\\)"):
        outgoing.due(now + 1.1)


@given(st.lists(st.floats(min_value=0.0, max_value=30.0), min_size=1, max_size=50))
def test_the_timeout_follows_the_round_trip_within_10_ms_and_1_s(round_trips: list[float]) -> None:
    outgoing = OutgoingFrames()
    now = 0.0
    for sequence, round_trip in enumerate(round_trips):
        outgoing.sent(sequence, b"x", now)
        now += round_trip
        assert outgoing.acknowledged(sequence, now)
        assert 0.01 <= outgoing.timeout <= 1.0
