"""Snapshots of the Slurm state: start one, describe it, prune old backups.

Waiting is the workflow's job: :meth:`Snapshots.start` returns at once and the workflow polls
:meth:`Snapshots.describe`. Retention runs inside ``describe`` when a backup has become
AVAILABLE (and on its own as :meth:`Snapshots.retain`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from hyperpod_ha.observability import logger
from hyperpod_ha.snapshots.errors import SnapshotFailed
from hyperpod_ha.snapshots.fsx import Fsx
from hyperpod_ha.snapshots.models import DescribeRequest, Retention, Snapshot, SnapshotState, StartRequest
from hyperpod_ha.snapshots.naming import backup_of_execution, client_request_token, snapshot_tags, tags_of
from hyperpod_ha.snapshots.plan import Plan, plan_snapshot
from hyperpod_ha.snapshots.progress import backup_state, export_state
from hyperpod_ha.snapshots.retention import RETENTION_BUSY, BackupScope, retention_plan, reused_backup
from hyperpod_ha.snapshots.settings import SnapshotSettings

if TYPE_CHECKING:
    from mypy_boto3_fsx import FSxClient


class Snapshots:
    def __init__(
        self,
        fsx: FSxClient,
        settings: SnapshotSettings,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.fsx = Fsx(fsx)
        self.settings = settings
        self._clock = clock

    def start(self, request: StartRequest) -> Snapshot:
        file_system_id = self.settings.file_system_id
        if not file_system_id:
            return Snapshot(
                "unsupported", None, "UNSUPPORTED", "no file system configured (FILE_SYSTEM_ID is empty)"
            )
        file_system = self.fsx.file_system(file_system_id)
        lustre = file_system.get("FileSystemType") == "LUSTRE"
        associations = self.fsx.associations(file_system_id) if lustre else []
        paths = self.settings.paths_for(request.cluster)
        plan = plan_snapshot(file_system, associations, paths)
        logger.info(
            "snapshot plan", extra={"kind": plan.kind, "reason": plan.reason, "file_system": file_system_id}
        )
        if plan.kind == "backup":
            return self._backup(file_system_id, request)
        if plan.kind == "export":
            return self._export(file_system_id, request, paths, plan)
        return Snapshot("unsupported", None, "UNSUPPORTED", plan.reason)

    def _backup(self, file_system_id: str, request: StartRequest) -> Snapshot:
        backups = self.fsx.backups(file_system_id)
        existing = backup_of_execution(backups, request.execution_id)
        if existing is not None:
            return Snapshot(
                "backup",
                str(existing["BackupId"]),
                str(existing.get("Lifecycle")),
                "backup of this run already made",
            )
        reused = reused_backup(
            backups,
            BackupScope(file_system_id, request.cluster, self.settings.stack_name),
            self._clock(),
            self.settings.min_backup_interval_minutes,
        )
        if reused is not None:
            logger.info(
                "backup reused inside the interval", extra={"backup": reused.id, "detail": reused.detail}
            )
            return reused
        backup = self.fsx.create_backup(
            file_system_id,
            client_request_token("backup", request.execution_id),
            snapshot_tags(request, self.settings.stack_name),
        )
        logger.info("backup started", extra={"backup": backup["BackupId"], "file_system": file_system_id})
        return Snapshot(
            "backup", backup["BackupId"], backup["Lifecycle"], f"backup of {file_system_id} started"
        )

    def _export(
        self, file_system_id: str, request: StartRequest, paths: Sequence[str], plan: Plan
    ) -> Snapshot:
        report_path = plan.report_path(self.settings.export_report_path)
        task = self.fsx.create_export(
            file_system_id,
            paths,
            report_path,
            client_request_token("export", request.execution_id),
            snapshot_tags(request, self.settings.stack_name),
        )
        logger.info("export started", extra={"task": task["TaskId"], "file_system": file_system_id})
        return Snapshot(
            "export",
            task["TaskId"],
            task["Lifecycle"],
            f"{plan.reason}; paths {', '.join(paths)}; report {report_path}",
        )

    def describe(self, request: DescribeRequest) -> SnapshotState:
        if request.kind == "unsupported" or request.id is None:
            return SnapshotState(
                request.kind, request.id, "UNSUPPORTED", True, False, "no snapshot was taken"
            )
        if request.kind == "export":
            return export_state(request.id, self.fsx.export_task(request.id))
        backup = self.fsx.backup(request.id)
        state = backup_state(request.id, backup)
        cluster = tags_of(backup or {}).get("cluster") or self.settings.cluster_name
        if not state.succeeded or not cluster:
            return state
        try:
            return replace(state, retention=self.retain(cluster))
        except SnapshotFailed as error:
            # The backup is made; a failed clean-up is reported and runs again next time.
            return replace(state, detail=f"{state.detail}; retention skipped: {error.reason}")

    def retain(self, cluster: str) -> Retention:
        """Delete our AVAILABLE backups of this cluster and file system beyond the newest N."""
        file_system_id = self.settings.file_system_id
        keep = self.settings.retention
        if not file_system_id:
            return Retention(keep)
        scope = BackupScope(file_system_id, cluster, self.settings.stack_name)
        kept, doomed = retention_plan(self.fsx.backups(file_system_id), scope, keep)
        deleted: list[str] = []
        skipped: list[tuple[str, str]] = []
        for backup_id in doomed:
            refused = self.fsx.delete_backup(backup_id)
            if refused is None:
                deleted.append(backup_id)
                continue
            if refused not in RETENTION_BUSY:
                logger.warning("backup not deleted", extra={"backup": backup_id, "code": refused})
            skipped.append((backup_id, refused))
        if deleted or skipped:
            logger.info("retention", extra={"kept": kept, "deleted": deleted, "skipped": skipped})
        return Retention(keep, tuple(kept), tuple(deleted), tuple(skipped))
