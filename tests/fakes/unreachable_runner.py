"""A command runner none of whose targets SSM can reach."""

from __future__ import annotations

from hyperpod_ha.commands import CommandRequest, CommandResult, TargetUnreachable


class UnreachableRunner:
    """Every request fails as Session Manager fails for a node whose agent is not connected."""

    def __init__(self, transport: str = "session-manager") -> None:
        self.transport = transport

    def run(self, request: CommandRequest) -> CommandResult:
        raise TargetUnreachable(f"TargetNotConnected: {request.target} is not connected")
