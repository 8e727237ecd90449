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


class ClusterHeld(RotationError):
    """The cluster's lease is held by another: the roll-out (and a rotation's finishSecret, which
    starts one) does not start. ``holder`` is its kind; ``reason`` is safe to log."""

    def __init__(self, reason: str, *, holder: str) -> None:
        super().__init__(reason)
        self.holder = holder


class ClusterBusy(ClusterHeld):
    """A verification run or another roll-out holds the cluster for a few minutes: retried."""


class RolloutRefused(ClusterHeld):
    """A drill or a restore holds the cluster: no roll-out while it acts on the controllers."""
