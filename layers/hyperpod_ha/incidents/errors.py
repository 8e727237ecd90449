"""The incident feature's errors. Their messages are safe to log."""

from __future__ import annotations

from hyperpod_ha.errors import HyperpodHaError, InputRejected


class InvalidIncidentRequest(InputRejected):
    """The incident request is malformed."""


class NoteRefused(InvalidIncidentRequest):
    """A ``note`` that did not come from a running execution of this stack's restore state
    machine (a direct invoke naming any execution): nothing was noted."""


class IncidentFailed(HyperpodHaError):
    """OpsCenter or SNS refused a call we cannot do without."""
