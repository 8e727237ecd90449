"""What the restore's steps touch (made by the function from its settings) and the request
every step reads."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hyperpod_ha.commands import CommandRunner
from hyperpod_ha.controllers.models import ClusterControllers
from hyperpod_ha.lease import Lease
from hyperpod_ha.request_fields import is_cluster_name
from hyperpod_ha.restore.errors import InvalidRestoreRequest
from hyperpod_ha.restore.settings import RestoreMode, RestoreSettings, restore_mode
from hyperpod_ha.status_records import StatusRecords
from hyperpod_ha.topic_messages import TopicMessage


@dataclass
class RestoreContext:
    """What the steps touch, made by the function from its settings."""

    cluster: str
    settings: RestoreSettings
    document: str
    transport: str
    lease_seconds: int
    take_lease: Callable[[Lease], Lease | None]  # None when taken
    actions_this_hour: Callable[[int], int]
    count_action: Callable[[int, int], int | None]  # (hour, at most) -> count, None at the bound
    rollout: Callable[[dt.datetime], str | None]
    runner: Callable[[], CommandRunner]
    command_deadline_seconds: float
    status: StatusRecords
    notify: Callable[[TopicMessage], str | None]
    start_verification: Callable[[str, str], Mapping[str, Any]]  # (restore execution, reason)
    # What a step that acts checks at that moment, from AWS rather than from its request: the
    # cluster's lease as stored, and this cluster's controllers discovered now.
    lease: Callable[[], Lease | None]
    controllers: Callable[[], ClusterControllers]
    clock: Callable[[], float] = time.time
    region: str = "us-east-1"
    # reboot-node (RestoreRedundancy=all, and ClusterId for the grant: settings.reboot_refused):
    # since when each instance has been unreachable (the watchdog's record),
    # BatchRebootClusterNodes for one instance, and that record set to the reboot's time.
    unreachable_since: Callable[[], Mapping[str, int]] = dict
    reboot: Callable[[str], Mapping[str, Any]] | None = None
    restart_unreachable: Callable[[str, int], None] = lambda instance_id, now: None


@dataclass(frozen=True)
class RestoreRequest:
    cluster: str
    mode: RestoreMode
    dry_run: bool = False

    @classmethod
    def from_json(cls, data: object, default_mode: RestoreMode) -> RestoreRequest:
        if not isinstance(data, Mapping):
            raise InvalidRestoreRequest("the restore request is not a JSON object")
        cluster = data.get("cluster")
        if not is_cluster_name(cluster):
            raise InvalidRestoreRequest("cluster must be a HyperPod cluster name")
        mode = restore_mode(data.get("mode", default_mode.value))
        if mode is None:
            raise InvalidRestoreRequest("mode must be off, standbys or all")
        dry_run = data.get("dry_run", False)
        if not isinstance(dry_run, bool):
            raise InvalidRestoreRequest("dry_run must be a boolean")
        return cls(cluster, mode, dry_run)


def request_of(event: Mapping[str, Any], context: RestoreContext) -> RestoreRequest:
    request = RestoreRequest.from_json(event.get("request"), context.settings.restore_mode)
    if request.cluster != context.cluster:
        raise InvalidRestoreRequest("the request names another cluster than this stack's")
    return request
