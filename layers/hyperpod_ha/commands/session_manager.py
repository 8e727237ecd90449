"""Run one fixed command through Session Manager (the only way into HyperPod nodes).

``ssm.start_session`` opens a session for a Session document; the command's output then
comes over the session's websocket data channel (``session_channel``, which speaks it as
AWS's plugin does; ``frames`` has the binary layout). The public
:class:`SessionManagerRunner` is synchronous; the data channel runs on ``asyncio``
inside it. Every failure after StartSession terminates the session, so nothing is left
running on the node; a dropped connection is resumed with ResumeSession.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Final

from botocore.exceptions import BotoCoreError, ClientError

from hyperpod_ha.aws_errors import error_code
from hyperpod_ha.commands import (
    SESSION_MANAGER,
    CommandRequest,
    CommandResult,
    CommandTimedOut,
    HandshakeTimedOut,
    ProtocolError,
)
from hyperpod_ha.commands.session_channel import CLIENT_VERSION, MAX_OUTPUT_BYTES, DataChannel, StartedSession
from hyperpod_ha.commands.session_encryption import SessionDataKeys
from hyperpod_ha.commands.session_output import SessionOutput
from hyperpod_ha.commands.ssm_errors import command_error
from hyperpod_ha.observability import logger

if TYPE_CHECKING:
    from mypy_boto3_ssm import SSMClient

__all__ = ["CLIENT_VERSION", "TRANSPORT", "SessionManagerRunner", "SessionOutput", "StartedSession"]

TRANSPORT: Final = SESSION_MANAGER


class SessionManagerRunner:
    """Runs a Session document (``sessionType: NonInteractiveCommands``) on a target.

    ``request.document`` is the Session document, ``request.parameters`` its parameters
    (``{"command": [...]}`` for ``AWS-StartNonInteractiveCommand``; nothing for a custom
    document that fixes its command). The deadline covers StartSession, the data channel
    and its close. ``data_keys`` (the operator's ``SessionKmsKeyArn``) lets it join a session
    that Session Manager's preferences encrypt with KMS; without it such a session fails at once.
    """

    transport = TRANSPORT

    def __init__(
        self,
        ssm: SSMClient,
        *,
        max_output_bytes: int = MAX_OUTPUT_BYTES,
        reconnect_delay: float = 0.1,
        data_keys: SessionDataKeys | None = None,
    ) -> None:
        self._ssm = ssm
        self._data_keys = data_keys
        self._max_output_bytes = max_output_bytes
        self._reconnect_delay = reconnect_delay

    def run(self, request: CommandRequest) -> CommandResult:
        started = time.monotonic()
        session = self._start_session(request)
        logger.info(
            "session started",
            extra={"session_id": session.session_id, "target": request.target, "document": request.document},
        )
        channel = DataChannel(
            session,
            resume=lambda: self._resume(session, request.target),
            max_output_bytes=self._max_output_bytes,
            reconnect_delay=self._reconnect_delay,
            target=request.target,
            data_keys=self._data_keys,
        )
        try:
            remaining = request.deadline_seconds - (time.monotonic() - started)
            if remaining <= 0:
                raise TimeoutError
            output = asyncio.run(self._channel(channel, remaining))
        except TimeoutError:
            self._terminate(session)
            if not channel.handshake_seen and not channel.output_seen:
                # No limit of its own (an agent may be slow to open its side): the deadline decides.
                raise HandshakeTimedOut(
                    f"session {session.session_id} on {request.target}: no handshake from the agent "
                    f"within the deadline of {request.deadline_seconds:g} s"
                ) from None
            raise CommandTimedOut(
                f"session {session.session_id} on {request.target} did not finish within "
                f"{request.deadline_seconds:g} s"
            ) from None
        except BaseException:
            self._terminate(session)
            raise
        duration = time.monotonic() - started
        logger.info(
            "session finished",
            extra={"session_id": session.session_id, "exit_code": output.exit_code, "duration": duration},
        )
        return CommandResult(
            stdout=output.stdout.decode("utf-8", errors="replace"),
            stderr=None if output.stderr is None else output.stderr.decode("utf-8", errors="replace"),
            exit_code=output.exit_code,
            duration_seconds=duration,
            transport=TRANSPORT,
        )

    @staticmethod
    async def _channel(channel: DataChannel, seconds: float) -> SessionOutput:
        async with asyncio.timeout(seconds):
            return await channel.run()

    async def _resume(self, session: StartedSession, target: str) -> str | None:
        """ResumeSession for a fresh token (the plugin reconnects to the same StreamUrl)."""
        try:
            response = await asyncio.to_thread(self._ssm.resume_session, SessionId=session.session_id)
        except (ClientError, BotoCoreError) as error:
            raise command_error(error, "ResumeSession", target) from error
        return response.get("TokenValue") or None

    def _start_session(self, request: CommandRequest) -> StartedSession:
        parameters = {name: list(values) for name, values in request.parameters.items()}
        try:
            if parameters:
                response = self._ssm.start_session(
                    Target=request.target, DocumentName=request.document, Parameters=parameters
                )
            else:
                response = self._ssm.start_session(Target=request.target, DocumentName=request.document)
        except (ClientError, BotoCoreError) as error:
            raise command_error(error, "StartSession", request.target) from error
        try:
            return StartedSession(
                session_id=response["SessionId"],
                token_value=response["TokenValue"],
                stream_url=response["StreamUrl"],
            )
        except KeyError as missing:
            raise ProtocolError(f"StartSession response lacks {missing.args[0]}") from None

    def _terminate(self, session: StartedSession) -> None:
        try:
            self._ssm.terminate_session(SessionId=session.session_id)
        except ClientError as error:
            logger.warning(
                "could not terminate session",
                extra={"session_id": session.session_id, "error_code": error_code(error)},
            )
        except BotoCoreError as error:
            logger.warning(
                "could not terminate session",
                extra={"session_id": session.session_id, "error_type": type(error).__name__},
            )
        else:
            logger.info("session terminated", extra={"session_id": session.session_id})
