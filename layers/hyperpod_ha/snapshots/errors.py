"""What a snapshot request raises; the workflow's Retry matches ``SnapshotBusy`` by name."""

from __future__ import annotations

from hyperpod_ha.errors import HyperpodHaError, InputRejected


class InvalidSnapshotRequest(InputRejected):
    """The snapshot request is malformed. The reason is safe to log."""


class SnapshotBusy(HyperpodHaError):
    """FSx runs one backup (or data repository task) at a time; try again later."""


class SnapshotFailed(HyperpodHaError):
    """FSx refused the snapshot for a reason waiting will not fix. ``reason`` is safe to log."""
