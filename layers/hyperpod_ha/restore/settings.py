"""How redundancy is restored: the mode (the template's ``RestoreRedundancy``) and how many
actions per cluster and hour (``RestoreMaxPerHour``), read by the restore function and by the
verification workflow's choice (the template passes the same parameter to both)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Final

from hyperpod_ha.environment import Integer, OptionalText, Settings, Text


class RestoreMode(StrEnum):
    """``off`` (default): nothing is started, the reasons name the action that would restore it.
    ``standbys``: a backup controller whose slurmctld is not running (or hangs) is started.
    ``all``: also the configured primary after a failover (control goes back to it), and a
    controller unreachable through SSM for ``RestoreUnreachableMinutes`` while its instance is
    Running is rebooted (``BatchRebootClusterNodes``)."""

    OFF = "off"
    STANDBYS = "standbys"
    ALL = "all"


# Restore actions are counted per epoch hour (RestoreMaxPerHour).
HOUR: Final = 3600
DEFAULT_MAX_PER_HOUR: Final = 2
MAX_PER_HOUR: Final = 10  # the template's MaxValue
# RestoreUnreachableMinutes: under 5 a node's own reboot or an SSM agent's restart (a few
# minutes) would be taken for a dead node; over a day the reboot is no longer a restore.
DEFAULT_UNREACHABLE_MINUTES: Final = 15
_CLUSTER_ID: Final = re.compile(r"[a-z0-9]{12}")
MIN_UNREACHABLE_MINUTES: Final = 5
MAX_UNREACHABLE_MINUTES: Final = 1440


@dataclass(frozen=True, kw_only=True)
class _Mode(Text):
    def parse(self, raw: str) -> str:
        value = raw.strip()
        if value not in RestoreMode.__members__.values():
            raise self.refused(f"must be one of {', '.join(RestoreMode)}")
        return value


@dataclass(frozen=True)
class _ClusterId(OptionalText):
    """The template's ClusterId: empty, or a HyperPod cluster id (12 lowercase letters or digits)."""

    def parse(self, raw: str) -> str | None:
        value = super().parse(raw)
        if value is not None and not _CLUSTER_ID.fullmatch(value):
            raise self.refused("must be empty or a cluster id: 12 lowercase letters or digits")
        return value


def restore_mode(value: object) -> RestoreMode | None:
    """The mode a request names, or ``None`` when it names none we know."""
    return RestoreMode(value) if isinstance(value, str) and value in set(RestoreMode) else None


@dataclass(frozen=True)
class RestoreSettings(Settings):
    mode: Annotated[str, _Mode("RESTORE_REDUNDANCY", RestoreMode.OFF.value)] = RestoreMode.OFF.value
    max_per_hour: Annotated[
        int, Integer("RESTORE_MAX_PER_HOUR", DEFAULT_MAX_PER_HOUR, minimum=1, maximum=MAX_PER_HOUR)
    ] = DEFAULT_MAX_PER_HOUR
    # Read in minutes, kept in seconds.
    unreachable_seconds: Annotated[
        int,
        Integer(
            "RESTORE_UNREACHABLE_MINUTES",
            DEFAULT_UNREACHABLE_MINUTES,
            minimum=MIN_UNREACHABLE_MINUTES,
            maximum=MAX_UNREACHABLE_MINUTES,
            scale=60,
        ),
    ] = DEFAULT_UNREACHABLE_MINUTES * 60
    # The template's ClusterId: BatchRebootClusterNodes is granted on that cluster's ARN only,
    # and only with RestoreRedundancy=all.
    cluster_id: Annotated[str | None, _ClusterId("CLUSTER_ID")] = None

    @property
    def restore_mode(self) -> RestoreMode:
        return RestoreMode(self.mode)

    @property
    def cannot_reboot(self) -> str | None:
        """Why this stack has no grant to reboot a node, or ``None`` when it has one."""
        if self.restore_mode is not RestoreMode.ALL:
            return f"the stack's RestoreRedundancy is {self.mode}, not all: no grant to reboot nodes"
        if not self.cluster_id:
            return "the stack's ClusterId is empty: no grant to reboot nodes (set it to reboot them)"
        return None

    def reboot_refused(self, discovered_id: str | None) -> str | None:
        """:attr:`cannot_reboot`, or a ClusterId other than the cluster's own (the grant is on
        that other cluster's ARN: every reboot would be denied)."""
        if self.cannot_reboot or not discovered_id or discovered_id == self.cluster_id:
            return self.cannot_reboot
        return (
            f"the stack's ClusterId {self.cluster_id} is not this cluster's id {discovered_id}: "
            "no grant to reboot its nodes"
        )
