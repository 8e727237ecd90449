"""Running one fixed command on a controller, whatever the transport.

A transport (Session Manager for HyperPod targets, Run Command for EC2 and managed
instances, the lab's network namespaces, the simulation's captured outputs) implements
:class:`CommandRunner`. Callers only see :class:`CommandResult` and the errors below. It
imports only ``hyperpod_ha.errors``, ``aws_errors`` and ``observability``; it is the interface
the lab may use, so it must never import a feature.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Protocol

from hyperpod_ha.errors import HyperpodHaError, InputRejected

if TYPE_CHECKING:
    from mypy_boto3_ssm import SSMClient


class InvalidCommandRequest(InputRejected):
    """A request no transport can run (empty target, non-positive deadline, ...)."""


@dataclass(frozen=True)
class CommandRequest:
    """What to run where.

    ``document`` names the SSM document (Session document or Run Command document);
    ``parameters`` are its parameters. ``deadline_seconds`` bounds the whole run,
    connection included.
    """

    target: str
    document: str
    deadline_seconds: float
    parameters: Mapping[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.target:
            raise InvalidCommandRequest("command target is empty")
        if not self.document:
            raise InvalidCommandRequest("command document is empty")
        if not self.deadline_seconds > 0:
            raise InvalidCommandRequest(f"deadline must be positive, got {self.deadline_seconds!r}")


@dataclass(frozen=True)
class CommandResult:
    stdout: str
    stderr: str | None  # None when the transport merges the streams
    exit_code: int | None  # None when the transport does not report one
    duration_seconds: float
    transport: str


class CommandRunner(Protocol):
    transport: str

    def run(self, request: CommandRequest) -> CommandResult: ...


class CommandError(HyperpodHaError):
    """The command could not be run to completion. ``reason`` is safe to log."""


class TargetUnreachable(CommandError):
    """The target is not connected (TargetNotConnected, InvalidInstanceId, ...)."""


class AccessDenied(CommandError):
    """IAM or the target refused the session or command."""


class CommandTimedOut(CommandError):
    """Our own deadline passed; the session or command was cancelled."""


class Throttled(CommandError):
    """The API throttled us; the caller (Step Functions Retry) should try again later."""


class ProtocolError(CommandError):
    """The other side broke the protocol or closed the connection too early."""


class HandshakeTimedOut(ProtocolError):
    """The agent never sent its handshake request (wrong document, agent too old, ...)."""


class EncryptionRequired(CommandError):
    """The session asks for KMS encryption, which this client refuses."""


class SessionEndedByService(CommandError):
    """The service ended the session (idle timeout, maximum duration, someone's
    TerminateSession) before the command reported its end: the output may be cut short."""


class CommandNotStarted(CommandError):
    """The agent could not start the command ("Unable to start command ...")."""


RunnerFactory = Callable[[], CommandRunner]
_transports: dict[str, RunnerFactory] = {}


def register_transport(name: str, factory: RunnerFactory) -> None:
    """Make a transport available by name (``COMMAND_TRANSPORT`` chooses one)."""
    _transports[name] = factory


def runner_for(name: str) -> CommandRunner:
    try:
        factory = _transports[name]
    except KeyError:
        raise InvalidCommandRequest(
            f"unknown command transport {name!r}; known: {sorted(_transports)}"
        ) from None
    return factory()


# The two transports through SSM (the template's CommandTransport values).
SESSION_MANAGER: Final = "session-manager"
RUN_COMMAND: Final = "run-command"


@functools.cache
def _ssm_client() -> SSMClient:
    """One ``ssm`` client per container, created on first use (after the endpoint is configured)."""
    import boto3

    return boto3.client("ssm")


def _session_manager_runner() -> CommandRunner:
    # Imported on demand: websockets and asyncio stay out of handlers that never run commands.
    from hyperpod_ha.commands.session_encryption import session_data_keys
    from hyperpod_ha.commands.session_manager import SessionManagerRunner

    return SessionManagerRunner(_ssm_client(), data_keys=session_data_keys())


def _run_command_runner() -> CommandRunner:
    from hyperpod_ha.commands.run_command import RunCommandRunner

    return RunCommandRunner(_ssm_client())


register_transport(SESSION_MANAGER, _session_manager_runner)
register_transport(RUN_COMMAND, _run_command_runner)
