"""The command's own errors: one line on stderr and an exit code, never a traceback."""

from __future__ import annotations

RUNTIME_ERROR = 1
USAGE_ERROR = 2


class CommandError(Exception):
    """Something went wrong while the command ran (exit 1 unless the command documents another)."""

    def __init__(self, message: str, code: int = RUNTIME_ERROR, *, result_printed: bool = False) -> None:
        super().__init__(message)
        self.code = code
        # The command printed its result before failing: with --json, that is the one object.
        self.result_printed = result_printed


class UsageError(CommandError):
    """The command was asked for something that does not exist or cannot go together (exit 2)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, USAGE_ERROR)
