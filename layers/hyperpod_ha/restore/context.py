"""What the restore's steps touch (made by the function from its settings, each a named
adapter: the kit's lease and documents, the state table's items, the secret, the reboots, the
topic, the following run) and the request every step reads."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hyperpod_ha.acting.execution_lease import ExecutionLease
from hyperpod_ha.acting.node_commands import NodeDocuments
from hyperpod_ha.acting.notice_topic import NoticeTopic
from hyperpod_ha.controllers.models import ClusterControllers
from hyperpod_ha.own_executions import OwnExecutions
from hyperpod_ha.request_fields import is_cluster_name, text_field
from hyperpod_ha.restore.errors import InvalidRestoreRequest, RestoreStepRefused
from hyperpod_ha.restore.reboot import NodeReboots
from hyperpod_ha.restore.secret_versions import SecretRollouts
from hyperpod_ha.restore.settings import RestoreMode, RestoreSettings, restore_mode
from hyperpod_ha.restore.state_items import RestoreItems
from hyperpod_ha.restore.verification import FollowingRuns
from hyperpod_ha.status_records import StatusRecords


@dataclass
class RestoreContext:
    """What the steps touch, made by the function from its settings."""

    cluster: str
    settings: RestoreSettings
    document: str
    transport: str
    # What a step that acts checks at that moment, from AWS rather than from its request: the
    # cluster's lease as stored, and this cluster's controllers discovered now.
    lease: ExecutionLease
    controllers: Callable[[], ClusterControllers]
    commands: Callable[[], NodeDocuments]  # made on first use: most steps run no command
    items: RestoreItems
    rollouts: SecretRollouts
    status: StatusRecords
    topic: NoticeTopic
    runs: FollowingRuns
    # This stack's restore state machine: the steps that act on their request's content without
    # the lease's re-check (begin, plan, finish, verify) run only inside its running execution.
    executions: OwnExecutions
    # BatchRebootClusterNodes (RestoreRedundancy=all, and ClusterId for the grant:
    # settings.reboot_refused); None: this stack cannot reboot nodes.
    reboots: NodeReboots | None = None
    clock: Callable[[], float] = time.time
    region: str = "us-east-1"


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


def own_execution(event: Mapping[str, Any], context: RestoreContext, what: str) -> str:
    """The request's execution, when it is a running execution of this stack's restore state
    machine; :class:`RestoreStepRefused` otherwise (a direct invoke naming any id), before
    anything is read, written or sent."""
    execution_id = text_field(event, "execution_id", rejected=InvalidRestoreRequest)
    context.executions.check(execution_id, RestoreStepRefused, what)
    return execution_id
