"""The Session Manager data channel's binary frame ("client message") codec.

Layout (big-endian), as the session-manager-plugin and the SSM agent write it:

====== ==== =================== ==============================================
offset size field               notes
====== ==== =================== ==============================================
0      4    HeaderLength (u32)  116 on frames we send
4      32   MessageType         ASCII, right-padded with spaces
36     4    SchemaVersion (u32) 1
40     8    CreatedDate (u64)   epoch milliseconds, non-zero
48     8    SequenceNumber(i64)
56     8    Flags (u64)         bit 0 SYN, bit 1 FIN
64     16   MessageId           UUID with its two 8-byte halves swapped
80     32   PayloadDigest       SHA-256 of the payload
112    4    PayloadType (u32)
116    4    PayloadLength (u32)
120    n    Payload             read as ``frame[HeaderLength + 4:]``
====== ==== =================== ==============================================

As the plugin's ``messageparser.go`` does, the decoder reads PayloadType at offset 112
whatever the HeaderLength and the payload from ``HeaderLength + 4``, never trusting
PayloadLength. A HeaderLength below 116 is nothing AWS's code writes: it is refused.
Anything that cannot be decoded raises :class:`FrameError`, a :class:`ProtocolError`.
"""

from __future__ import annotations

import hashlib
import json
import struct
import time
import uuid
from dataclasses import dataclass, field
from enum import IntEnum, IntFlag

from hyperpod_ha.commands import ProtocolError

SCHEMA_VERSION = 1
HEADER_LENGTH = 116
MESSAGE_TYPE_LENGTH = 32
DIGEST_LENGTH = 32

_MESSAGE_TYPE_OFFSET = 4
_SCHEMA_VERSION_OFFSET = 36
_CREATED_DATE_OFFSET = 40
_SEQUENCE_NUMBER_OFFSET = 48
_FLAGS_OFFSET = 56
_MESSAGE_ID_OFFSET = 64
_DIGEST_OFFSET = 80
_PAYLOAD_TYPE_OFFSET = 112

_U32 = struct.Struct(">I")
_FIXED_FIELDS = struct.Struct(">IQqQ")  # SchemaVersion, CreatedDate, SequenceNumber, Flags
_MAX_U32 = 2**32 - 1
_MAX_U64 = 2**64 - 1


class MessageType:
    """The MessageType values this client knows; any other value is ignored by the reader."""

    OUTPUT_STREAM_DATA = "output_stream_data"
    INPUT_STREAM_DATA = "input_stream_data"
    ACKNOWLEDGE = "acknowledge"
    CHANNEL_CLOSED = "channel_closed"
    START_PUBLICATION = "start_publication"
    PAUSE_PUBLICATION = "pause_publication"


class PayloadType(IntEnum):
    ACKNOWLEDGE = 0  # acknowledgements carry no payload type of their own
    OUTPUT = 1
    ERROR = 2
    SIZE = 3
    PARAMETER = 4
    HANDSHAKE_REQUEST = 5
    HANDSHAKE_RESPONSE = 6
    HANDSHAKE_COMPLETE = 7
    ENC_CHALLENGE_REQUEST = 8
    ENC_CHALLENGE_RESPONSE = 9
    FLAG = 10
    STDERR = 11
    EXIT_CODE = 12


class Flags(IntFlag):
    NONE = 0
    SYN = 1
    FIN = 2


class FrameError(ProtocolError):
    """A binary frame that cannot be decoded or encoded."""


def payload_digest(payload: bytes) -> bytes:
    return hashlib.sha256(payload).digest()


def _now_millis() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class ClientMessage:
    """One decoded (or to-be-encoded) data-channel frame.

    ``payload_digest`` is the digest *carried by the frame*; compare it with
    :meth:`digest_is_valid` rather than trusting it.
    """

    message_type: str
    sequence_number: int
    payload: bytes = b""
    payload_type: int = PayloadType.OUTPUT
    flags: int = Flags.NONE
    message_id: uuid.UUID = field(default_factory=uuid.uuid4)
    created_date: int = field(default_factory=_now_millis)
    schema_version: int = SCHEMA_VERSION
    header_length: int = HEADER_LENGTH
    payload_digest: bytes | None = None  # None: computed from the payload when encoding

    def digest_is_valid(self) -> bool:
        return self.payload_digest == payload_digest(self.payload)


def acknowledgement(message: ClientMessage, message_id: uuid.UUID, created_date: int) -> ClientMessage:
    """The ``acknowledge`` frame for ``message``: sequence 0, SYN|FIN, compact JSON, as AWS's
    client and agent send it."""
    content = {
        "AcknowledgedMessageType": message.message_type,
        "AcknowledgedMessageId": str(message.message_id),
        "AcknowledgedMessageSequenceNumber": message.sequence_number,
        "IsSequentialMessage": True,
    }
    return ClientMessage(
        message_type=MessageType.ACKNOWLEDGE,
        sequence_number=0,
        flags=Flags.SYN | Flags.FIN,
        payload_type=PayloadType.ACKNOWLEDGE,
        payload=json.dumps(content, separators=(",", ":")).encode(),
        message_id=message_id,
        created_date=created_date,
    )


def encode(message: ClientMessage) -> bytes:
    """Serialise ``message`` (HeaderLength 116); the digest is computed unless the message carries one."""
    if message.header_length != HEADER_LENGTH:
        raise FrameError(f"cannot encode HeaderLength {message.header_length}")
    try:
        message_type = message.message_type.encode("ascii")
    except UnicodeEncodeError:
        raise FrameError("message type is not ASCII") from None
    if len(message_type) > MESSAGE_TYPE_LENGTH:
        raise FrameError(f"message type longer than {MESSAGE_TYPE_LENGTH} bytes")
    digest = payload_digest(message.payload) if message.payload_digest is None else message.payload_digest
    if len(digest) != DIGEST_LENGTH:
        raise FrameError("payload digest must be 32 bytes")
    if len(message.payload) > _MAX_U32:
        raise FrameError("payload too long")
    try:
        fixed = _FIXED_FIELDS.pack(
            message.schema_version, message.created_date, message.sequence_number, message.flags
        )
        payload_type = _U32.pack(message.payload_type)
    except struct.error:
        raise FrameError("a header field is out of range") from None
    id_bytes = message.message_id.bytes
    return b"".join(
        (
            _U32.pack(message.header_length),
            message_type.ljust(MESSAGE_TYPE_LENGTH, b" "),
            fixed,
            id_bytes[8:16],
            id_bytes[0:8],
            digest,
            payload_type,
            _U32.pack(len(message.payload)),
            message.payload,
        )
    )


def decode(frame: bytes) -> ClientMessage:
    """Parse one binary frame; :class:`FrameError` on anything malformed."""
    if len(frame) < HEADER_LENGTH + 4:
        raise FrameError(f"frame of {len(frame)} bytes is shorter than any header")
    (header_length,) = _U32.unpack_from(frame, 0)
    if header_length < HEADER_LENGTH or header_length + 4 > len(frame):
        raise FrameError(f"HeaderLength {header_length} does not fit a frame of {len(frame)} bytes")
    raw_type = frame[_MESSAGE_TYPE_OFFSET : _MESSAGE_TYPE_OFFSET + MESSAGE_TYPE_LENGTH]
    try:
        message_type = raw_type.decode("ascii").strip(" \x00")
    except UnicodeDecodeError:
        raise FrameError("message type is not ASCII") from None
    if not message_type:
        raise FrameError("message type is empty")
    schema_version, created_date, sequence_number, flags = _FIXED_FIELDS.unpack_from(
        frame, _SCHEMA_VERSION_OFFSET
    )
    id_field = frame[_MESSAGE_ID_OFFSET : _MESSAGE_ID_OFFSET + 16]
    message_id = uuid.UUID(bytes=id_field[8:16] + id_field[0:8])
    digest = frame[_DIGEST_OFFSET : _DIGEST_OFFSET + DIGEST_LENGTH]
    (payload_type,) = _U32.unpack_from(frame, _PAYLOAD_TYPE_OFFSET)
    return ClientMessage(
        message_type=message_type,
        sequence_number=sequence_number,
        payload=frame[header_length + 4 :],
        payload_type=payload_type,
        flags=flags,
        message_id=message_id,
        created_date=created_date,
        schema_version=schema_version,
        header_length=header_length,
        payload_digest=digest,
    )
