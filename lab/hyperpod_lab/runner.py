"""A :class:`~hyperpod_ha.commands.CommandRunner` that runs commands on lab hosts.

It does what the SSM agent does for ``AWS-StartNonInteractiveCommand``: the command line
is split with shell-like rules and executed without a shell, as root, on the host (in its
network namespace, with its host name and files), within the request's deadline. A host
that is cut off the network (:meth:`Lab.isolate`) is as unreachable as an instance whose
agent lost its connection.
"""

from __future__ import annotations

import shlex
import subprocess
import time
from pathlib import Path

from hyperpod_ha.commands import (
    CommandRequest,
    CommandResult,
    CommandTimedOut,
    InvalidCommandRequest,
    TargetUnreachable,
    register_transport,
)
from hyperpod_lab.lab import Lab
from hyperpod_lab.processes import LabError

TRANSPORT = "lab"


class LabRequestError(InvalidCommandRequest):
    """The request holds no command line the lab can run. ``reason`` is safe to log."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def command_line(request: CommandRequest) -> list[str]:
    """The argv of the request's single command (``parameters["command"][0]``)."""
    commands = request.parameters.get("command", [])
    if len(commands) != 1 or not commands[0].strip():
        raise LabRequestError("the request needs exactly one non-empty parameters['command'] entry")
    try:
        argv = shlex.split(commands[0])
    except ValueError as exc:
        raise LabRequestError(f"the command line cannot be split: {exc}") from None
    if not argv:
        raise LabRequestError("the command line is empty")
    return argv


class LabRunner:
    """Runs requests on the lab's hosts; ``request.target`` is a lab host name, an
    instance id or a ``sagemaker-cluster:<cluster-id>_<group>-<instance-id>`` target."""

    transport = TRANSPORT

    def __init__(self, lab: Lab | None = None, *, tools: Path | None = None) -> None:
        """``tools``: a directory put first on every command's PATH, holding what an instance
        has and a lab host lacks (the AWS CLI with the instance role's answers: the roll-out's
        node script reads the database secret with it, and in no other way)."""
        self._lab = lab
        self._path_first = (str(tools),) if tools is not None else ()

    @property
    def lab(self) -> Lab:
        # Created on first use, so a runner made before `up` sees the lab that came up.
        if self._lab is None:
            self._lab = Lab()
        return self._lab

    def run(self, request: CommandRequest) -> CommandResult:
        argv = command_line(request)
        host = self.lab.topology.resolve_target(request.target)
        if host is None:
            raise TargetUnreachable(f"no lab instance for target {request.target!r}")
        if not self.lab.reachable(host.name):
            raise TargetUnreachable(f"lab instance {host.instance_id} ({host.name}) is not connected")
        started = time.monotonic()
        try:
            deadline = request.deadline_seconds
            done = self.lab.exec(host.name, argv, timeout=deadline, path_first=self._path_first)
        except subprocess.TimeoutExpired:
            raise CommandTimedOut(
                f"{argv[0]} on {host.name} did not finish within {request.deadline_seconds:g} s"
            ) from None
        except LabError as exc:
            # The host went away between the check and the run.
            raise TargetUnreachable(exc.reason) from None
        return CommandResult(
            stdout=done.stdout,
            stderr=done.stderr,
            exit_code=done.returncode,
            duration_seconds=time.monotonic() - started,
            transport=TRANSPORT,
        )


register_transport(TRANSPORT, LabRunner)
