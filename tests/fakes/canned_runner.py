"""A command runner that answers every request with a canned result (or error) and
records the requests: the transport double for code that only reads what came back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from hyperpod_ha.commands import CommandError, CommandRequest, CommandResult

Respond = Callable[[CommandRequest], CommandResult]


@dataclass
class CannedRunner:
    """Raises ``error`` if set, else answers with ``respond(request)`` or ``result``.

    ``factory`` is what a test registers as a transport; ``made`` counts the runners it made.
    """

    result: CommandResult | None = None
    error: CommandError | None = None
    respond: Respond | None = None
    transport: str = "fake"
    requests: list[CommandRequest] = field(default_factory=list)
    made: int = 0

    def run(self, request: CommandRequest) -> CommandResult:
        self.requests.append(request)
        if self.error is not None:
            raise self.error
        if self.respond is not None:
            return self.respond(request)
        assert self.result is not None
        return self.result

    def factory(self) -> CannedRunner:
        self.made += 1
        return self
