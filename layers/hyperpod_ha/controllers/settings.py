"""The settings parts the controllers' functions read (their own settings classes are in
:mod:`hyperpod_ha.controllers.function`): how the probe runs, which WatchdogFunction also reads,
and the readers of a cluster name and a deadline.

Defaults are the template's values (the template sets every variable; tests and local runs
may leave some out).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Final

from hyperpod_ha.commands import SESSION_MANAGER
from hyperpod_ha.environment import Number, Settings, Text
from hyperpod_ha.request_fields import is_cluster_name

DEFAULT_TRANSPORT: Final = SESSION_MANAGER  # the template's CommandTransport default
HEALTH_CHECK_DEADLINE_SECONDS: Final = 90.0  # HealthCheckFunction's PROBE_DEADLINE_SECONDS


@dataclass(frozen=True, kw_only=True)
class ClusterName(Text):
    def parse(self, raw: str) -> str:
        if not is_cluster_name(raw):
            raise self.refused("is not a HyperPod cluster name")
        return raw


@dataclass(frozen=True, kw_only=True)
class _Deadline(Number):
    def parse(self, raw: str) -> float:
        value = super().parse(raw)
        if not value > 0:  # also refuses NaN
            raise self.refused("must be positive")
        return value


@dataclass(frozen=True)
class ProbeSettings(Settings):
    """How the probe runs (HealthCheckFunction's settings, and WatchdogFunction's probe with its
    own deadline): which command transport, which document, and how long one probe may take."""

    # A name hyperpod_ha.commands.runner_for knows.
    transport: Annotated[str, Text("COMMAND_TRANSPORT", DEFAULT_TRANSPORT)]
    document: Annotated[str, Text("PROBE_DOCUMENT")]
    deadline_seconds: Annotated[float, _Deadline("PROBE_DEADLINE_SECONDS", HEALTH_CHECK_DEADLINE_SECONDS)]
