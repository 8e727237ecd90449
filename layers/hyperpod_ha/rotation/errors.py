"""The rotation's own errors: a request it refuses, and a step it could not complete."""

from __future__ import annotations

from hyperpod_ha.errors import HyperpodHaError, InputRejected


class RotationRequestInvalid(InputRejected):
    """The event, or the secret's rotation state, does not allow this step."""


class RotationError(HyperpodHaError):
    """A step could not be completed. ``reason`` is safe to log."""


class ExternalAccountingDatabase(RotationError):
    """The cluster's accounting database is HyperPod's to configure (``mode``: ``external``):
    the rotation refuses before anything changes. ``reason`` is safe to log."""

    def __init__(self, reason: str, *, mode: str) -> None:
        super().__init__(reason)
        self.mode = mode
