"""The one root of hyperpod-ha's errors, and its two broad kinds.

Every error the runtime package raises derives from :class:`HyperpodHaError`. Errors that the
state machines match on (``ErrorEquals``) keep their class names: Lambda reports an uncaught
error by its class name, whatever its base."""

from __future__ import annotations


class HyperpodHaError(Exception):
    """Raised by hyperpod-ha. Its message is safe to log: it never holds a secret."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.reason = str(self)  # what callers log or return


class InputRejected(HyperpodHaError, ValueError):
    """An event, request or command output this code will not act on; logged, never retried."""


class ConfigurationError(HyperpodHaError):
    """A setting the template should have given the function is missing or malformed."""
