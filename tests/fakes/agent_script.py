"""The script a fake Session Manager agent plays (``tests.fakes.ssm_agent``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hyperpod_ha.commands.frames import PayloadType


@dataclass(frozen=True)
class Output:
    """Data frames of one payload type, split into chunks of at most 1024 bytes."""

    data: bytes
    payload_type: int = PayloadType.OUTPUT
    corrupt_first_send: bool = False  # first transmission carries a wrong digest


def stdout(data: bytes, *, corrupt_first_send: bool = False) -> Output:
    return Output(data, PayloadType.OUTPUT, corrupt_first_send)


def stderr(data: bytes) -> Output:
    return Output(data, PayloadType.STDERR)


def exit_code(code: int) -> Output:
    return Output(f"EXIT_CODE: {code}".encode(), PayloadType.EXIT_CODE)


@dataclass(frozen=True)
class Reordered:
    """Emit the frames of ``steps`` in ``order`` (indices into their frames), ``gap`` apart."""

    steps: tuple[Output, ...]
    order: tuple[int, ...]
    gap: float = 0.05


@dataclass(frozen=True)
class ResendAcked:
    """Send an already acknowledged frame again, as the agent does when an ack is lost."""

    sequence_number: int


@dataclass(frozen=True)
class ServiceFrame:
    """A frame from the service outside the output sequence (start/pause_publication)."""

    message_type: str
    payload: bytes = b"{}"


@dataclass(frozen=True)
class UnknownFrame:
    message_type: str = "agent_session_state"
    payload: bytes = b'{"SessionState":"Terminating"}'


@dataclass(frozen=True)
class Garbage:
    """Send raw data as one websocket message (bytes: a binary frame, str: a text frame)."""

    data: bytes | str


@dataclass(frozen=True)
class Pause:
    seconds: float


@dataclass(frozen=True)
class ChannelClosed:
    output: str = ""  # the service's reason when it ends the session
    drain: bool = True  # wait for every output frame to be acknowledged first


@dataclass(frozen=True)
class Drop:
    """Lose the connection without channel_closed (abort: no close frame at all).

    ``resume``: wait for the client to reconnect with ``AgentScript.resume_token`` and go on.
    """

    abort: bool = True
    resume: bool = False


@dataclass(frozen=True)
class Hang:
    """Never end the session; wait for the client to go away."""


Step = (
    Output
    | Reordered
    | ResendAcked
    | ServiceFrame
    | UnknownFrame
    | Garbage
    | Pause
    | ChannelClosed
    | Drop
    | Hang
)


@dataclass
class AgentScript:
    session_id: str
    token: str
    steps: Sequence[Step] = ()
    session_type: str = "NonInteractiveCommands"
    kms_key_id: str | None = None
    # With ``kms`` (a KMS client that can decrypt the client's data key) the agent encrypts the
    # session as AWS's does; without, a KMS request only asks (the client must refuse).
    kms: Any = None
    target_id: str = ""  # the aws:ssm:TargetId of the encryption context
    kms_challenge: bool = True  # the KMSEncryption action carries a random challenge (newer agents)
    require_challenge_response: bool = False  # the agent's Kms.RequireKMSChallengeResponse
    answer_challenge_wrongly: bool = False  # expect another challenge answer than the right one
    extra_actions: Sequence[dict[str, Any]] = ()
    send_handshake: bool = True  # False: play the steps (if any) without a handshake
    handshake_delay: float = 0.0  # a late handshake: the agent opens its side after this
    handshake_response_timeout: float = 5.0  # the agent waits 15 s; tests need less
    resend_interval: float = 0.1
    lose_input: frozenset[int] = frozenset()  # input sequence numbers whose first copy is lost
    ack_input: bool = True  # False: never acknowledge input (the client gives the session up)
    resume_token: str | None = None
    patience: float = 10.0  # no scripted wait outlives this (a recording of the plugin needs minutes)
