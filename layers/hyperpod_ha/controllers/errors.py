"""The controllers feature's errors. Their messages are safe to log."""

from __future__ import annotations

from hyperpod_ha.errors import ConfigurationError, HyperpodHaError, InputRejected


class ClusterRequestInvalid(InputRejected):
    """The request names no cluster, or a string that cannot be a HyperPod cluster name."""


class ControllerGroupNotFound(ConfigurationError):
    """The cluster has no instance group of the configured controller group's name."""


class ControllerInputError(InputRejected):
    """The controller handed to the health check is not what discovery produces."""


class ControllerCheckThrottled(HyperpodHaError):
    """SSM throttled us; Step Functions retries the health check later.

    The state machine's Retry matches this class name (Lambda's ``errorType``): keep it.
    """


class ReportRejected(InputRejected):
    """A report (JSON) is not a controller report."""


class MaintenanceInputError(InputRejected):
    """A cluster or node status that is not text (discovery's maintenance, or the workflow's copy)."""
