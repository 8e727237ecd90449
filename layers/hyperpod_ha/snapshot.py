"""The names ``hyperpod_ha.snapshot`` had before snapshots became the ``hyperpod_ha.snapshots``
package; import them from there."""

from __future__ import annotations

from hyperpod_ha.snapshots.errors import InvalidSnapshotRequest, SnapshotBusy, SnapshotFailed
from hyperpod_ha.snapshots.models import (
    KINDS,
    DescribeRequest,
    Kind,
    Retention,
    Snapshot,
    SnapshotState,
    StartRequest,
)
from hyperpod_ha.snapshots.naming import (
    CREATED_BY,
    TAG_VALUE_LIMIT,
    TOKEN_LIMIT,
    client_request_token,
    is_ours,
    snapshot_tags,
    tag_value,
)
from hyperpod_ha.snapshots.plan import REPORT_SUFFIX, ExportTarget, Plan, plan_snapshot
from hyperpod_ha.snapshots.progress import BACKUP_FINAL, BACKUP_IN_PROGRESS, TASK_FINAL, TASK_IN_PROGRESS
from hyperpod_ha.snapshots.retention import recent_backup, retention_plan
from hyperpod_ha.snapshots.service import Snapshots
from hyperpod_ha.snapshots.settings import (
    DEFAULT_MIN_BACKUP_INTERVAL_MINUTES,
    DEFAULT_RETENTION,
    SnapshotSettings,
)

__all__ = [
    "BACKUP_FINAL",
    "BACKUP_IN_PROGRESS",
    "CREATED_BY",
    "DEFAULT_MIN_BACKUP_INTERVAL_MINUTES",
    "DEFAULT_RETENTION",
    "KINDS",
    "REPORT_SUFFIX",
    "TAG_VALUE_LIMIT",
    "TASK_FINAL",
    "TASK_IN_PROGRESS",
    "TOKEN_LIMIT",
    "DescribeRequest",
    "ExportTarget",
    "InvalidSnapshotRequest",
    "Kind",
    "Plan",
    "Retention",
    "Snapshot",
    "SnapshotBusy",
    "SnapshotFailed",
    "SnapshotSettings",
    "SnapshotState",
    "Snapshots",
    "StartRequest",
    "client_request_token",
    "is_ours",
    "plan_snapshot",
    "recent_backup",
    "retention_plan",
    "snapshot_tags",
    "tag_value",
]
