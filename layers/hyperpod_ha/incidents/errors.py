"""The incident feature's errors. Their messages are safe to log."""

from __future__ import annotations

from hyperpod_ha.errors import HyperpodHaError, InputRejected


class InvalidIncidentRequest(InputRejected):
    """The incident request is malformed."""


class IncidentFailed(HyperpodHaError):
    """OpsCenter or SNS refused a call we cannot do without."""
