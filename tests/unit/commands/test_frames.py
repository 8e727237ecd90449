"""The binary frame codec: exact layout, service frames, round trip, garbage."""

from __future__ import annotations

import hashlib
import struct
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hyperpod_ha.commands import ProtocolError
from hyperpod_ha.commands.frames import (
    ClientMessage,
    Flags,
    FrameError,
    MessageType,
    PayloadType,
    decode,
    encode,
)

MESSAGE_ID = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")


def test_encoded_frame_has_the_exact_layout() -> None:
    payload = b'{"hello":"agent"}'
    message = ClientMessage(
        message_type=MessageType.INPUT_STREAM_DATA,
        sequence_number=7,
        payload=payload,
        payload_type=PayloadType.HANDSHAKE_RESPONSE,
        flags=Flags.SYN,
        message_id=MESSAGE_ID,
        created_date=1_700_000_000_123,
    )

    frame = encode(message)

    assert struct.unpack_from(">I", frame, 0) == (116,)
    assert frame[4:36] == b"input_stream_data".ljust(32, b" ")
    assert struct.unpack_from(">I", frame, 36) == (1,)
    assert struct.unpack_from(">Q", frame, 40) == (1_700_000_000_123,)
    assert struct.unpack_from(">q", frame, 48) == (7,)
    assert struct.unpack_from(">Q", frame, 56) == (1,)
    assert frame[64:72] == bytes.fromhex("8899aabbccddeeff")  # the UUID's second half first
    assert frame[72:80] == bytes.fromhex("0011223344556677")
    assert frame[80:112] == hashlib.sha256(payload).digest()
    assert struct.unpack_from(">I", frame, 112) == (6,)
    assert struct.unpack_from(">I", frame, 116) == (len(payload),)
    assert frame[120:] == payload
    assert len(frame) == 120 + len(payload)


def test_empty_payload_carries_the_digest_of_nothing() -> None:
    frame = encode(ClientMessage(message_type=MessageType.ACKNOWLEDGE, sequence_number=0, payload_type=0))
    assert frame[80:112] == hashlib.sha256(b"").digest()
    assert len(frame) == 120


def test_decoding_strips_padding_and_swaps_the_message_id_back() -> None:
    frame = bytearray(
        encode(ClientMessage(message_type="acknowledge", sequence_number=3, message_id=MESSAGE_ID))
    )
    frame[4:36] = b"acknowledge".ljust(32, b"\x00")  # some writers pad with NULs

    message = decode(bytes(frame))

    assert message.message_type == "acknowledge"
    assert message.message_id == MESSAGE_ID
    assert message.sequence_number == 3
    assert message.digest_is_valid()


def test_header_length_112_is_refused() -> None:
    # Nothing in AWS's code writes it: the plugin reads PayloadType at 112 whatever the
    # HeaderLength, so such a frame would lose four bytes of its payload.
    payload = b'{"SessionId":"s-1","Output":""}'
    frame = (
        struct.pack(">I", 112)
        + b"channel_closed".ljust(32, b" ")
        + struct.pack(">IQqQ", 1, 1_700_000_000_000, 0, 0)
        + MESSAGE_ID.bytes[8:]
        + MESSAGE_ID.bytes[:8]
        + hashlib.sha256(payload).digest()
        + struct.pack(">I", len(payload))
        + payload
    )

    with pytest.raises(FrameError, match="HeaderLength 112"):
        decode(frame)
    with pytest.raises(FrameError, match="HeaderLength 112"):
        encode(ClientMessage(message_type="channel_closed", sequence_number=0, header_length=112))


def test_payload_type_is_read_at_offset_112_when_header_length_is_larger() -> None:
    frame = encode(ClientMessage(message_type="output_stream_data", sequence_number=0, payload=b"abcdef"))
    longer = struct.pack(">I", 118) + frame[4:]  # as messageparser.go: the payload from HeaderLength + 4

    message = decode(longer)

    assert message.payload_type == PayloadType.OUTPUT
    assert message.payload == b"cdef"


def test_payload_is_read_after_the_header_not_by_payload_length() -> None:
    frame = bytearray(
        encode(ClientMessage(message_type="output_stream_data", sequence_number=0, payload=b"abc"))
    )
    frame[116:120] = struct.pack(">I", 999)  # a lying PayloadLength
    assert decode(bytes(frame)).payload == b"abc"


@pytest.mark.parametrize(
    ("frame", "reason"),
    [
        (b"", "shorter than any header"),
        (b"\x00" * 115, "shorter than any header"),
        (struct.pack(">I", 111) + b" " * 200, "HeaderLength 111"),
        (struct.pack(">I", 400) + b" " * 200, "HeaderLength 400"),
        (struct.pack(">I", 116) + b"\xff" * 32 + b"\x00" * 84, "not ASCII"),
        (struct.pack(">I", 116) + b" " * 32 + b"\x00" * 84, "empty"),
    ],
)
def test_malformed_frames_raise_frame_error(frame: bytes, reason: str) -> None:
    with pytest.raises(FrameError, match=reason):
        decode(frame)


@pytest.mark.parametrize(
    "message",
    [
        ClientMessage(message_type="x" * 33, sequence_number=0),
        ClientMessage(message_type="sortie_données", sequence_number=0),
        ClientMessage(message_type="acknowledge", sequence_number=2**63),
        ClientMessage(message_type="acknowledge", sequence_number=0, flags=-1),
        ClientMessage(message_type="acknowledge", sequence_number=0, payload_digest=b"short"),
        ClientMessage(message_type="acknowledge", sequence_number=0, header_length=120),
    ],
)
def test_unencodable_messages_raise_frame_error(message: ClientMessage) -> None:
    with pytest.raises(FrameError):
        encode(message)


_message_types = st.text(
    alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=32
)


@st.composite
def messages(draw: st.DrawFn) -> ClientMessage:
    payload = draw(st.binary(max_size=3000))
    return ClientMessage(
        message_type=draw(_message_types),
        sequence_number=draw(st.integers(-(2**63), 2**63 - 1)),
        payload=payload,
        payload_type=draw(st.integers(0, 2**32 - 1)),
        flags=draw(st.integers(0, 2**64 - 1)),
        message_id=draw(st.uuids()),
        created_date=draw(st.integers(0, 2**64 - 1)),
        schema_version=draw(st.integers(0, 2**32 - 1)),
        payload_digest=draw(
            st.one_of(st.just(hashlib.sha256(payload).digest()), st.binary(min_size=32, max_size=32))
        ),
    )


@given(messages())
def test_round_trip(message: ClientMessage) -> None:
    assert decode(encode(message)) == message


@given(st.binary(max_size=400))
def test_garbage_gives_a_frame_or_a_protocol_error(garbage: bytes) -> None:
    try:
        message = decode(garbage)
    except FrameError:  # the ProtocolError callers catch; anything else fails the test
        return
    assert message.message_type
    assert len(garbage) >= 116


@given(st.binary(min_size=120, max_size=400), st.integers(112, 130))
def test_garbage_with_a_plausible_header_length(garbage: bytes, header_length: int) -> None:
    frame = struct.pack(">I", header_length) + garbage[4:]
    try:
        message = decode(frame)
    except FrameError:
        return
    assert header_length >= 116
    assert message.payload == frame[header_length + 4 :]


def test_frame_errors_are_protocol_errors() -> None:
    with pytest.raises(ProtocolError) as raised:
        decode(b"\x00" * 10)
    assert isinstance(raised.value, FrameError)
    assert raised.value.reason == "frame of 10 bytes is shorter than any header"
