"""Where a backup or an export task stands, from FSx's description of it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hyperpod_ha.snapshots.models import SnapshotState

BACKUP_IN_PROGRESS = frozenset({"CREATING", "TRANSFERRING", "PENDING", "COPYING"})
BACKUP_FINAL = frozenset({"AVAILABLE", "FAILED", "DELETED"})
TASK_IN_PROGRESS = frozenset({"PENDING", "EXECUTING", "CANCELING"})
TASK_FINAL = frozenset({"SUCCEEDED", "FAILED", "CANCELED"})


def backup_state(backup_id: str, backup: Mapping[str, Any] | None) -> SnapshotState:
    """Done once final, succeeded once AVAILABLE; ``None``: FSx does not know the backup."""
    if backup is None:
        return SnapshotState("backup", backup_id, "NOT_FOUND", True, False, f"backup {backup_id} not found")
    lifecycle = str(backup.get("Lifecycle"))
    failure = (backup.get("FailureDetails") or {}).get("Message")
    if lifecycle in BACKUP_FINAL:
        detail = failure or f"backup {lifecycle.lower()}"
    else:
        progress = backup.get("ProgressPercent")
        detail = f"backup {lifecycle.lower()}" + (f", {progress}%" if progress is not None else "")
    done = lifecycle in BACKUP_FINAL
    return SnapshotState("backup", backup_id, lifecycle, done, lifecycle == "AVAILABLE", detail)


def export_state(task_id: str, task: Mapping[str, Any] | None) -> SnapshotState:
    """Succeeded only when every file was exported; ``None``: FSx does not know the task."""
    if task is None:
        return SnapshotState("export", task_id, "NOT_FOUND", True, False, f"export task {task_id} not found")
    lifecycle = str(task.get("Lifecycle"))
    status = task.get("Status") or {}
    failed_files = int(status.get("FailedCount") or 0)
    detail = f"export {lifecycle.lower()}"
    if status.get("TotalCount") is not None:
        detail += f", {status.get('SucceededCount', 0)} of {status['TotalCount']} files exported"
    if failure := (task.get("FailureDetails") or {}).get("Message"):
        detail += f": {failure}"
    if failed_files:
        detail += f"; {failed_files} files failed (see the report in S3)"
    succeeded = lifecycle == "SUCCEEDED" and failed_files == 0
    return SnapshotState("export", task_id, lifecycle, lifecycle in TASK_FINAL, succeeded, detail)
