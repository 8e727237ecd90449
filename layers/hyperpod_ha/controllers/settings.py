"""The settings of the functions that find and check controllers, read once per container.

Defaults are the template's values (the template sets every variable; tests and local runs
may leave some out).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Self

from hyperpod_ha.environment import Environment, Settings, number, text
from hyperpod_ha.errors import ConfigurationError
from hyperpod_ha.request_fields import is_cluster_name

DEFAULT_TRANSPORT: Final = "session-manager"  # the template's CommandTransport default
HEALTH_CHECK_DEADLINE_SECONDS: Final = 90.0  # HealthCheckFunction's PROBE_DEADLINE_SECONDS


@dataclass(frozen=True)
class DiscoverySettings(Settings):
    """DiscoverControllersFunction's: the cluster this stack watches and its controllers' group."""

    cluster: str  # CLUSTER_NAME
    controller_group: str  # CONTROLLER_GROUP

    @classmethod
    def read(cls, env: Environment) -> Self:
        cluster = text(env, "CLUSTER_NAME")
        if not is_cluster_name(cluster):
            raise ConfigurationError("environment variable CLUSTER_NAME is not a HyperPod cluster name")
        return cls(cluster=cluster, controller_group=text(env, "CONTROLLER_GROUP"))


@dataclass(frozen=True)
class ProbeSettings(Settings):
    """How the probe runs (HealthCheckFunction's settings, and WatchdogFunction's probe): which
    command transport, which document, and how long one probe may take."""

    transport: str  # COMMAND_TRANSPORT: a name hyperpod_ha.commands.runner_for knows
    document: str  # PROBE_DOCUMENT
    deadline_seconds: float  # PROBE_DEADLINE_SECONDS

    @classmethod
    def read(cls, env: Environment, *, deadline_seconds: float = HEALTH_CHECK_DEADLINE_SECONDS) -> Self:
        """``deadline_seconds``: the default of the function reading it (the template's value)."""
        deadline = number(env, "PROBE_DEADLINE_SECONDS", deadline_seconds)
        if not deadline > 0:  # also refuses NaN
            raise ConfigurationError("environment variable PROBE_DEADLINE_SECONDS must be positive")
        return cls(
            transport=text(env, "COMMAND_TRANSPORT", DEFAULT_TRANSPORT),
            document=text(env, "PROBE_DOCUMENT"),
            deadline_seconds=deadline,
        )
