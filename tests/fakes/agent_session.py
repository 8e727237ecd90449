"""What the fake SSM agent sends: the handshake and the script's steps, output in chunks,
resends until acknowledged."""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from typing import Any

from hyperpod_ha.commands.frames import (
    ClientMessage,
    Flags,
    MessageType,
    PayloadType,
    encode,
)
from tests.fakes.agent_encryption import AgentEncryption
from tests.fakes.agent_script import (
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
)
from tests.fakes.session_input import SessionInput
from tests.fakes.session_state import (
    AGENT_CLOCK_MILLIS,
    AGENT_VERSION,
    CHUNK_SIZE,
    Rejection,
    SentFrame,
)

# What the agent encrypts in an encrypted session (SendStreamDataMessage).
ENCRYPTED_TYPES = frozenset({PayloadType.OUTPUT, PayloadType.STDERR, PayloadType.EXIT_CODE})


class AgentSession(SessionInput):
    """A session, played from its script over the first connection (and a resumed one)."""

    encryption: AgentEncryption | None = None

    async def play(self) -> None:
        await self._accept(self.websocket, self.script.token, first=True)
        if self.script.send_handshake:
            if self.script.handshake_delay:
                await self._checked(
                    asyncio.sleep(self.script.handshake_delay), self.script.handshake_delay + 1
                )
            if not await self._handshake():
                return
        for step in self.script.steps:
            if await self._play(step):
                return
        await self._until_client_gone()

    async def _handshake(self) -> bool:
        """Play the handshake; False when the client refused an action and the session ended."""
        actions: list[dict[str, Any]] = [
            {
                "ActionType": "SessionType",
                "ActionParameters": {
                    "SessionType": self.script.session_type,
                    # AWS's agent sends none for NonInteractiveCommands (tests/fixtures/ssm_agent).
                    "Properties": None,
                },
            }
        ]
        if self.script.kms_key_id is not None and self.script.kms is not None:
            self.encryption = AgentEncryption(
                self.script.kms, self.script.kms_key_id, self.script.session_id, self.script.target_id
            )
            self.agent.encryption = self.encryption
            actions.append(self.encryption.action(with_challenge=self.script.kms_challenge))
        elif self.script.kms_key_id is not None:
            actions.append(
                {"ActionType": "KMSEncryption", "ActionParameters": {"KMSKeyId": self.script.kms_key_id}}
            )
        actions.extend(self.script.extra_actions)
        request = {"AgentVersion": AGENT_VERSION, "RequestedClientActions": actions}
        await self._send_output(PayloadType.HANDSHAKE_REQUEST, json.dumps(request).encode(), flags=Flags.SYN)
        if not await self._checked(self.handshake_answered.wait(), self.script.handshake_response_timeout):
            raise Rejection(4009, "no handshake response")
        response = self.agent.handshake_response or {}
        processed = response.get("ProcessedClientActions") or []
        refused = [a for a in processed if a.get("ActionStatus") != 1]
        if refused or len(processed) != len(actions):
            # As the agent does: a session whose client cannot do what it asks ends, with the reason.
            await self._play_channel_closed(
                ChannelClosed(output=f"Handshake failed: {response.get('Errors')}")
            )
            return False
        customer_message = ""
        if self.encryption is not None:
            if not await self._encryption_agreed(processed):
                return False
            customer_message = "This session is encrypted using AWS KMS."
        complete = {"HandshakeTimeToComplete": 1_500_000, "CustomerMessage": customer_message}
        await self._send_output(PayloadType.HANDSHAKE_COMPLETE, json.dumps(complete).encode())
        return True

    async def _encryption_agreed(self, processed: list[dict[str, Any]]) -> bool:
        """The data key decrypted and the challenge answered; else the session ends, as the agent's."""
        assert self.encryption is not None
        [result] = [a.get("ActionResult") for a in processed if a.get("ActionType") == "KMSEncryption"]
        refusal = self.encryption.finalize(
            result, require_challenge_response=self.script.require_challenge_response
        )
        if refusal is None:
            await self._send_output(PayloadType.ENC_CHALLENGE_REQUEST, self.encryption.challenge_request())
            if not await self._checked(
                self.challenge_answered.wait(), self.script.handshake_response_timeout
            ):
                refusal = "Timed out waiting for encryption challenge."
            elif not self.encryption.challenge_answered(self.challenge_response):
                refusal = "Encryption challenge does not match!"
        if refusal is None:
            self.agent.challenge_answered_ok = True
            return True
        self.agent.refusal = refusal
        await self._play_channel_closed(ChannelClosed(output=f"Handshake failed: {refusal}"))
        return False

    def _frame(self, payload_type: int, payload: bytes, flags: int = Flags.NONE) -> ClientMessage:
        sequence = self.next_sequence
        self.next_sequence += 1
        return ClientMessage(
            message_type=MessageType.OUTPUT_STREAM_DATA,
            sequence_number=sequence,
            payload=payload,
            payload_type=payload_type,
            flags=flags,
            message_id=uuid.uuid5(uuid.NAMESPACE_URL, f"{self.script.session_id}/output/{sequence}"),
            created_date=AGENT_CLOCK_MILLIS + sequence,
        )

    async def _send_output(
        self, payload_type: int, payload: bytes, *, flags: int = Flags.NONE, corrupt: bool = False
    ) -> None:
        cipher = self.encryption.cipher if self.encryption is not None else None
        if cipher is not None and payload and payload_type in ENCRYPTED_TYPES:
            payload = cipher.encrypt(payload)
        await self._emit(self._frame(payload_type, payload, flags), corrupt=corrupt)

    async def _emit(self, message: ClientMessage, *, corrupt: bool = False) -> None:
        sent = SentFrame(message, encode(message), good_copy_sent=not corrupt)
        self.sent[message.sequence_number] = sent
        self.agent.events.append(("sent", message.sequence_number))
        first = encode(with_digest(message, b"\x00" * 32)) if corrupt else sent.data
        await self._send(first)
        self.tasks.append(asyncio.create_task(self._redeliver(sent)))

    async def _redeliver(self, sent: SentFrame) -> None:
        """Resend until acknowledged, as the agent does (the session's end stops it)."""
        while not sent.acked.is_set() and not self.client_gone.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(sent.acked.wait(), self.script.resend_interval)
            if sent.acked.is_set() or self.client_gone.is_set() or self.dropping:
                continue
            sent.good_copy_sent = True
            await self._send(sent.data)

    async def _play(self, step: Step) -> bool:
        """Play one step; True when the session is over."""
        match step:
            case Output():
                for index, chunk in enumerate(chunks(step.data)):
                    await self._send_output(
                        step.payload_type, chunk, corrupt=step.corrupt_first_send and index == 0
                    )
            case Reordered():
                messages = [
                    self._frame(s.payload_type, chunk) for s in step.steps for chunk in chunks(s.data)
                ]
                for position, index in enumerate(step.order):
                    if position:
                        await asyncio.sleep(step.gap)
                    await self._emit(messages[index])
            case ResendAcked():
                sent = self.sent[step.sequence_number]
                await self._checked(sent.acked.wait(), self.script.patience)
                self.agent.events.append(("sent", step.sequence_number))
                await self._send(sent.data)
            case ServiceFrame() | UnknownFrame():
                await self._send(encode(loose_frame(step)))
            case Garbage():
                await self._send(step.data)
            case Pause():
                await self._checked(asyncio.sleep(step.seconds), step.seconds + 1)
            case ChannelClosed():
                await self._play_channel_closed(step)
                return True
            case Drop():
                return await self._play_drop(step)
            case Hang():
                await self._until_client_gone()
                return True
        return False

    async def _play_drop(self, step: Drop) -> bool:
        self.dropping = step.resume
        if step.abort:
            self.websocket.transport.abort()
        else:
            await self.websocket.close(1011, "agent went away")
        if not step.resume:
            return True
        if not await self._checked(self.reconnected.wait(), self.script.patience):
            raise Rejection(4011, "the client did not reconnect")
        return False

    async def _play_channel_closed(self, step: ChannelClosed) -> None:
        if step.drain:  # the agent drains its outgoing buffer before closing
            for sent in list(self.sent.values()):
                await self._checked(sent.acked.wait(), self.script.patience)
        content = {
            "MessageType": MessageType.CHANNEL_CLOSED,
            "MessageId": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{self.script.session_id}/closed")),
            "CreatedDate": "2025-11-30T00:00:00.000Z",
            "DestinationId": "mi-0123456789abcdef0",
            "SessionId": self.script.session_id,
            "SchemaVersion": 1,
            "Output": step.output,
        }
        message = ClientMessage(
            message_type=MessageType.CHANNEL_CLOSED,
            sequence_number=0,
            payload=json.dumps(content).encode(),
            payload_type=0,
            message_id=uuid.uuid5(uuid.NAMESPACE_URL, f"{self.script.session_id}/channel_closed"),
            created_date=AGENT_CLOCK_MILLIS,
        )
        await self._send(encode(message))
        await self._until_client_gone()


def chunks(data: bytes) -> list[bytes]:
    return [data[start : start + CHUNK_SIZE] for start in range(0, len(data), CHUNK_SIZE)] or [b""]


def loose_frame(step: ServiceFrame | UnknownFrame) -> ClientMessage:
    """A frame outside the output sequence; the client must neither process nor acknowledge it."""
    return ClientMessage(
        message_type=step.message_type,
        sequence_number=0,
        payload=step.payload,
        payload_type=0,
        message_id=uuid.uuid5(uuid.NAMESPACE_URL, f"{step.message_type}/{step.payload!r}"),
        created_date=AGENT_CLOCK_MILLIS,
    )


def with_digest(message: ClientMessage, digest: bytes) -> ClientMessage:
    return ClientMessage(
        message_type=message.message_type,
        sequence_number=message.sequence_number,
        payload=message.payload,
        payload_type=message.payload_type,
        flags=message.flags,
        message_id=message.message_id,
        created_date=message.created_date,
        payload_digest=digest,
    )
