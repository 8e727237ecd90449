"""The exit codes every command shares, and the command's own errors (one line on stderr, never
a traceback).

======  ==================================================================================
code    meaning
======  ==================================================================================
0       verified: the command did what was asked and the answer is yes (HEALTHY or
        FAILED_OVER, the drill completed, nothing left to restore, every doctor check passed)
1       not verified: the command worked and the answer is no (a DOWN cluster, an open
        incident, a drill that failed or was refused, a controller not restored, a failed check)
2       usage error: bad arguments, a value out of bounds, a cluster the stack does not watch,
        a stack that cannot be told apart from another (nothing was started)
3       runtime error: the command could not find out (no credentials, AWS refused, an
        execution that itself failed)
130     interrupted
======  ==================================================================================
"""

from __future__ import annotations

VERIFIED = 0
NOT_VERIFIED = 1
USAGE_ERROR = 2
RUNTIME_ERROR = 3
INTERRUPTED = 130


class CommandError(Exception):
    """Something went wrong while the command ran (exit 3 unless it says another)."""

    def __init__(self, message: str, code: int = RUNTIME_ERROR, *, result_printed: bool = False) -> None:
        super().__init__(message)
        self.code = code
        # The command printed its result before failing: with --json, that is the one object.
        self.result_printed = result_printed


class UsageError(CommandError):
    """The command was asked for something that does not exist or cannot go together (exit 2)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, USAGE_ERROR)
