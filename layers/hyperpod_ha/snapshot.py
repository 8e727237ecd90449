"""Snapshots of the Slurm state kept on FSx for Lustre.

A *backup* (``CreateBackup``) where FSx allows one: persistent deployment types not linked
to a data repository. Otherwise, when the file system is linked to S3, an *export* of just
the Slurm state path (``CreateDataRepositoryTask`` ``EXPORT_TO_REPOSITORY``). Otherwise an
*unsupported* result saying why: a missing snapshot must not fail the verification.

Waiting is the workflow's job: :meth:`Snapshots.start` returns at once and the workflow polls
:meth:`Snapshots.describe`. Retention runs inside ``describe`` when a backup has become
AVAILABLE (and on its own as the ``retain`` action): it keeps the newest N backups this
project made for the cluster and file system and never touches any other backup.

Every start is keyed on the execution: the ``ClientRequestToken`` is derived from the
execution ARN, and a backup tagged with the execution is found and returned before any new
one is asked for, so a retried start never makes a second backup.

At most one backup per cluster is made per ``MIN_BACKUP_INTERVAL_MINUTES``: a start inside the
interval reuses (and reports) the newest backup, so a flood of forged notifications cannot
push the backups made before an incident out of retention.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from botocore.exceptions import ClientError

from hyperpod_ha.observability import logger
from hyperpod_ha.settings import ConfigurationError, int_setting, setting

if TYPE_CHECKING:
    from mypy_boto3_fsx import FSxClient
    from mypy_boto3_fsx.type_defs import TagTypeDef

CREATED_BY = "hyperpod-ha"
DEFAULT_RETENTION = 7
DEFAULT_MIN_BACKUP_INTERVAL_MINUTES = 60
REPORT_SUFFIX = "/hyperpod-ha-reports"
TOKEN_LIMIT = 63
TAG_VALUE_LIMIT = 256

Kind = Literal["backup", "export", "unsupported"]
KINDS: tuple[Kind, ...] = ("backup", "export", "unsupported")

BACKUP_IN_PROGRESS = frozenset({"CREATING", "TRANSFERRING", "PENDING", "COPYING"})
BACKUP_FINAL = frozenset({"AVAILABLE", "FAILED", "DELETED"})
TASK_IN_PROGRESS = frozenset({"PENDING", "EXECUTING", "CANCELING"})
TASK_FINAL = frozenset({"SUCCEEDED", "FAILED", "CANCELED"})
# Deleting these is refused while the backup is in use; retention tries again next time.
_RETENTION_BUSY = frozenset({"BackupInProgress", "BackupRestoring", "BackupBeingCopied"})


class InvalidSnapshotRequest(ValueError):
    """The snapshot request is malformed. The reason is safe to log."""


class SnapshotBusy(Exception):  # the workflow's Retry matches this exact name
    """FSx runs one backup (or data repository task) at a time; try again later."""


class SnapshotFailed(Exception):
    """FSx refused the snapshot for a reason waiting will not fix. ``reason`` is safe to log."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# --- settings and requests -------------------------------------------------------------------


@dataclass(frozen=True)
class SnapshotSettings:
    file_system_id: str | None
    retention: int = DEFAULT_RETENTION
    export_paths: tuple[str, ...] = ()  # empty: the cluster's slurmctld state directory
    export_report_path: str | None = None
    cluster_name: str | None = None
    min_backup_interval_minutes: int = 0  # 0: a backup per verification
    stack_name: str | None = None  # tagged on every snapshot; IAM deletes only this stack's

    def __post_init__(self) -> None:
        if self.retention < 1:
            # Zero would delete the backup just made.
            raise ConfigurationError("BACKUP_RETENTION must be at least 1")
        if self.min_backup_interval_minutes < 0:
            raise ConfigurationError("MIN_BACKUP_INTERVAL_MINUTES must not be negative")

    @classmethod
    def from_environment(cls) -> SnapshotSettings:
        paths = tuple(
            p.strip().strip("/") for p in setting("EXPORT_PATHS", "").split(",") if p.strip().strip("/")
        )
        return cls(
            file_system_id=setting("FILE_SYSTEM_ID", "").strip() or None,
            retention=int_setting("BACKUP_RETENTION", DEFAULT_RETENTION),
            export_paths=paths,
            export_report_path=setting("EXPORT_REPORT_PATH", "").strip() or None,
            cluster_name=setting("CLUSTER_NAME", "").strip() or None,
            min_backup_interval_minutes=int_setting(
                "MIN_BACKUP_INTERVAL_MINUTES", DEFAULT_MIN_BACKUP_INTERVAL_MINUTES
            ),
            stack_name=setting("STACK_NAME", "").strip() or None,
        )

    def paths_for(self, cluster: str) -> tuple[str, ...]:
        """Export paths, relative to the file system's mount point as FSx wants them."""
        return self.export_paths or (f"aws/hyperpod/{cluster}/var/spool/slurmctld",)


def _text(event: Mapping[str, Any], name: str, *, required: bool = True) -> str:
    value = event.get(name)
    if value is None or value == "":
        if required:
            raise InvalidSnapshotRequest(f"{name} is required")
        return ""
    if not isinstance(value, str):
        raise InvalidSnapshotRequest(f"{name} must be a string")
    return value.strip()


_CLUSTER = re.compile(r"^[A-Za-z0-9](-*[A-Za-z0-9]){0,62}$")


@dataclass(frozen=True)
class StartRequest:
    cluster: str
    reason: str
    verdict: str
    execution_id: str

    @classmethod
    def from_event(cls, event: Mapping[str, Any]) -> StartRequest:
        cluster = _text(event, "cluster")
        if not _CLUSTER.match(cluster):
            raise InvalidSnapshotRequest("cluster is not a HyperPod cluster name")
        return cls(
            cluster=cluster,
            reason=_text(event, "reason", required=False),
            verdict=_text(event, "verdict", required=False),
            execution_id=_text(event, "execution_id"),
        )


@dataclass(frozen=True)
class DescribeRequest:
    kind: Kind
    id: str | None

    @classmethod
    def from_event(cls, event: Mapping[str, Any]) -> DescribeRequest:
        kind = event.get("kind")
        if kind not in KINDS:
            raise InvalidSnapshotRequest(f"kind must be one of {', '.join(KINDS)}")
        snapshot_id = _text(event, "id", required=kind != "unsupported") or None
        prefix = {"backup": "backup-", "export": "task-"}.get(str(kind))
        if prefix and not (snapshot_id or "").startswith(prefix):
            raise InvalidSnapshotRequest(f"id of a {kind} starts with {prefix!r}")
        return cls(kind=kind, id=snapshot_id)


# --- results -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    kind: Kind
    id: str | None
    status: str
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id, "status": self.status, "detail": self.detail}


@dataclass(frozen=True)
class Retention:
    keep: int
    kept: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    # Backups we wanted to delete but FSx refused for now (in use), with the error code.
    skipped: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "keep": self.keep,
            "kept": list(self.kept),
            "deleted": list(self.deleted),
            "skipped": [{"id": backup, "reason": reason} for backup, reason in self.skipped],
        }


@dataclass(frozen=True)
class SnapshotState:
    kind: Kind
    id: str | None
    status: str
    done: bool
    succeeded: bool
    detail: str
    retention: Retention | None = None

    def to_json(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "kind": self.kind,
            "id": self.id,
            "status": self.status,
            "done": self.done,
            "succeeded": self.succeeded,
            "detail": self.detail,
        }
        if self.retention is not None:
            result["retention"] = self.retention.to_json()
        return result


# --- pure decisions ---------------------------------------------------------------------------


def client_request_token(purpose: str, execution_id: str) -> str:
    """An FSx ClientRequestToken (at most 63 of ``[A-Za-z0-9_.-]``) stable for one execution."""
    digest = hashlib.sha256(f"{purpose}\n{execution_id}".encode()).hexdigest()
    return f"hph-{re.sub(r'[^A-Za-z0-9_.-]', '-', purpose)[:16]}-{digest}"[:TOKEN_LIMIT]


def _tag_char(char: str) -> str:
    # FSx tag values allow letters, separators, numbers and _.:/=+-@ only.
    if char in "_.:/=+-@" or unicodedata.category(char)[0] in "LZN":
        return char
    return "_"


def tag_value(text: str) -> str:
    return "".join(_tag_char(c) for c in text)[:TAG_VALUE_LIMIT].strip()


def snapshot_tags(request: StartRequest, stack_name: str | None = None) -> list[TagTypeDef]:
    values = {
        "created-by": CREATED_BY,
        "stack": stack_name or "",
        "cluster": request.cluster,
        "execution": request.execution_id,
        "verdict": request.verdict,
        "reason": request.reason,
    }
    return [{"Key": key, "Value": tag_value(value)} for key, value in values.items() if value]


def _tags(resource: Mapping[str, Any]) -> dict[str, str]:
    return {str(tag.get("Key")): str(tag.get("Value", "")) for tag in resource.get("Tags") or []}


def is_ours(backup: Mapping[str, Any], file_system_id: str, cluster: str, stack: str | None = None) -> bool:
    """Made by this project (this stack, when named) for this cluster, and (where the description
    says) of this file system."""
    tags = _tags(backup)
    if tags.get("created-by") != CREATED_BY or tags.get("cluster") != tag_value(cluster):
        return False
    if stack and tags.get("stack") != tag_value(stack):
        return False
    described = (backup.get("FileSystem") or {}).get("FileSystemId") or backup.get("FileSystemId")
    return described in (None, file_system_id)


def _created(backup: Mapping[str, Any]) -> datetime:
    created = backup.get("CreationTime")
    if isinstance(created, datetime):
        return created if created.tzinfo else created.replace(tzinfo=UTC)
    return datetime.min.replace(tzinfo=UTC)


def retention_plan(
    backups: Sequence[Mapping[str, Any]],
    file_system_id: str,
    cluster: str,
    keep: int,
    stack: str | None = None,
) -> tuple[list[str], list[str]]:
    """(kept, to delete): of our AVAILABLE backups, the newest ``keep`` stay."""
    ours = [
        b for b in backups if b.get("Lifecycle") == "AVAILABLE" and is_ours(b, file_system_id, cluster, stack)
    ]
    ours.sort(key=_created, reverse=True)
    return [str(b["BackupId"]) for b in ours[:keep]], [str(b["BackupId"]) for b in ours[keep:]]


def recent_backup(
    backups: Sequence[Mapping[str, Any]],
    file_system_id: str,
    cluster: str,
    since: datetime,
    stack: str | None = None,
) -> Mapping[str, Any] | None:
    """Our newest backup of the cluster made at or after ``since`` that is not failed or gone."""
    recent = [
        b
        for b in backups
        if b.get("Lifecycle") not in ("FAILED", "DELETED")
        and is_ours(b, file_system_id, cluster, stack)
        and _created(b) >= since
    ]
    return max(recent, key=_created, default=None)


@dataclass(frozen=True)
class ExportTarget:
    """Where an S3 data repository is linked: ``file_system_path`` on FSx, ``repository_path`` in S3."""

    file_system_path: str
    repository_path: str

    def covers(self, path: str) -> bool:
        linked = "/" + self.file_system_path.strip("/")
        wanted = "/" + path.strip("/")
        return linked in ("/", wanted) or wanted.startswith(linked + "/")


@dataclass(frozen=True)
class Plan:
    kind: Kind
    reason: str
    targets: tuple[ExportTarget, ...] = field(default_factory=tuple)


def _legacy_link(lustre: Mapping[str, Any]) -> ExportTarget | None:
    config = lustre.get("DataRepositoryConfiguration") or {}
    path = config.get("ExportPath") or config.get("ImportPath")
    if isinstance(path, str) and path.startswith("s3://"):
        return ExportTarget("/", path.rstrip("/"))
    return None


def plan_snapshot(
    file_system: Mapping[str, Any], associations: Sequence[Mapping[str, Any]], paths: Sequence[str]
) -> Plan:
    """Backup, export or unsupported, from the file system's description and its associations."""
    fs_type = file_system.get("FileSystemType")
    if fs_type != "LUSTRE":
        return Plan("unsupported", f"file system type {fs_type} is not FSx for Lustre")
    lustre = file_system.get("LustreConfiguration") or {}
    deployment = str(lustre.get("DeploymentType") or "")
    legacy = _legacy_link(lustre)
    # Any association, even one still being created, makes FSx refuse a backup.
    linked = legacy is not None or any(a.get("Lifecycle") != "DELETING" for a in associations)
    if deployment.startswith("PERSISTENT") and not linked:
        return Plan("backup", f"{deployment} file system without a data repository link")
    why = (
        f"deployment type {deployment or 'unknown'}"
        if not deployment.startswith("PERSISTENT")
        else "linked to S3"
    )
    targets = [
        ExportTarget(str(a.get("FileSystemPath") or "/"), str(a["DataRepositoryPath"]).rstrip("/"))
        for a in associations
        if a.get("Lifecycle") == "AVAILABLE" and str(a.get("DataRepositoryPath", "")).startswith("s3://")
    ]
    if (
        legacy is not None
        and (lustre.get("DataRepositoryConfiguration") or {}).get("Lifecycle", "AVAILABLE") == "AVAILABLE"
    ):
        targets.append(legacy)
    if not targets:
        return Plan(
            "unsupported", f"FSx cannot back it up ({why}) and it has no available S3 data repository link"
        )
    chosen: list[ExportTarget] = []
    for path in paths:
        covering = sorted(
            (t for t in targets if t.covers(path)), key=lambda t: len(t.file_system_path), reverse=True
        )
        if not covering:
            return Plan(
                "unsupported", f"FSx cannot back it up ({why}) and no S3 data repository link covers {path}"
            )
        chosen.append(covering[0])
    return Plan("export", f"{why}: exporting the Slurm state to S3", tuple(chosen))


def _error(error: ClientError) -> tuple[str, str]:
    details = error.response.get("Error", {})
    return str(details.get("Code", "Unknown")), str(details.get("Message", ""))[:300]


# --- the adapter -----------------------------------------------------------------------------


class Snapshots:
    def __init__(
        self,
        fsx: FSxClient,
        settings: SnapshotSettings,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.fsx = fsx
        self.settings = settings
        self._clock = clock

    # --- start ---

    def start(self, request: StartRequest) -> Snapshot:
        file_system_id = self.settings.file_system_id
        if not file_system_id:
            return Snapshot(
                "unsupported", None, "UNSUPPORTED", "no file system configured (FILE_SYSTEM_ID is empty)"
            )
        file_system = self._file_system(file_system_id)
        associations = (
            self._associations(file_system_id) if file_system.get("FileSystemType") == "LUSTRE" else []
        )
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

    def _file_system(self, file_system_id: str) -> Mapping[str, Any]:
        try:
            found = self.fsx.describe_file_systems(FileSystemIds=[file_system_id])["FileSystems"]
        except ClientError as error:
            code, message = _error(error)
            raise SnapshotFailed(f"DescribeFileSystems {file_system_id}: {code}: {message}") from error
        if not found:
            raise SnapshotFailed(f"file system {file_system_id} not found")
        return found[0]

    def _associations(self, file_system_id: str) -> list[Mapping[str, Any]]:
        associations: list[Mapping[str, Any]] = []
        # No botocore paginator exists for this call.
        request: dict[str, Any] = {"Filters": [{"Name": "file-system-id", "Values": [file_system_id]}]}
        try:
            while True:
                page = self.fsx.describe_data_repository_associations(**request)
                associations += page.get("Associations", [])
                if not page.get("NextToken"):
                    return associations
                request["NextToken"] = page["NextToken"]
        except ClientError as error:
            code, _ = _error(error)
            # File systems with the legacy link (or none that supports associations) answer this way.
            if code in ("BadRequest", "InvalidDataRepositoryType", "DataRepositoryAssociationNotFound"):
                logger.info(
                    "no data repository associations", extra={"file_system": file_system_id, "code": code}
                )
                return []
            raise SnapshotFailed(f"DescribeDataRepositoryAssociations {file_system_id}: {code}") from error

    @staticmethod
    def _our_backup_for(backups: Sequence[Mapping[str, Any]], execution_id: str) -> Mapping[str, Any] | None:
        """The backup an earlier attempt of this execution made, if any."""
        wanted = tag_value(execution_id)
        for backup in backups:
            tags = _tags(backup)
            if tags.get("created-by") == CREATED_BY and tags.get("execution") == wanted:
                return backup
        return None

    def _backups(self, file_system_id: str) -> list[Mapping[str, Any]]:
        backups: list[Mapping[str, Any]] = []
        try:
            for page in self.fsx.get_paginator("describe_backups").paginate(
                Filters=[{"Name": "file-system-id", "Values": [file_system_id]}]
            ):
                backups += page.get("Backups", [])
        except ClientError as error:
            code, message = _error(error)
            raise SnapshotFailed(f"DescribeBackups {file_system_id}: {code}: {message}") from error
        return backups

    def _backup(self, file_system_id: str, request: StartRequest) -> Snapshot:
        backups = self._backups(file_system_id)
        existing = self._our_backup_for(backups, request.execution_id)
        if existing is not None:
            return Snapshot(
                "backup",
                str(existing["BackupId"]),
                str(existing.get("Lifecycle")),
                "backup of this run already made",
            )
        interval = self.settings.min_backup_interval_minutes
        if interval:
            now = self._clock()
            since = now - timedelta(minutes=interval)
            recent = recent_backup(backups, file_system_id, request.cluster, since, self.settings.stack_name)
            if recent is not None:
                minutes = int((now - _created(recent)).total_seconds() // 60)
                logger.info(
                    "backup reused inside the interval",
                    extra={"backup": recent["BackupId"], "minutes_ago": minutes, "interval": interval},
                )
                return Snapshot(
                    "backup",
                    str(recent["BackupId"]),
                    str(recent.get("Lifecycle")),
                    f"reused backup {recent['BackupId']} made {minutes} min ago: at most one backup "
                    f"per {interval} min (MinBackupIntervalMinutes)",
                )
        try:
            backup = self.fsx.create_backup(
                FileSystemId=file_system_id,
                ClientRequestToken=client_request_token("backup", request.execution_id),
                Tags=snapshot_tags(request, self.settings.stack_name),
            )["Backup"]
        except ClientError as error:
            code, message = _error(error)
            if code == "BackupInProgress":
                raise SnapshotBusy(f"a backup of {file_system_id} is already in progress") from error
            raise SnapshotFailed(f"CreateBackup {file_system_id}: {code}: {message}") from error
        logger.info("backup started", extra={"backup": backup["BackupId"], "file_system": file_system_id})
        return Snapshot(
            "backup", backup["BackupId"], backup["Lifecycle"], f"backup of {file_system_id} started"
        )

    def _export(
        self, file_system_id: str, request: StartRequest, paths: Sequence[str], plan: Plan
    ) -> Snapshot:
        report_path = self.settings.export_report_path or plan.targets[0].repository_path + REPORT_SUFFIX
        try:
            task = self.fsx.create_data_repository_task(
                Type="EXPORT_TO_REPOSITORY",
                FileSystemId=file_system_id,
                Paths=list(paths),
                Report={
                    "Enabled": True,
                    "Path": report_path,
                    "Format": "REPORT_CSV_20191124",
                    "Scope": "FAILED_FILES_ONLY",
                },
                ClientRequestToken=client_request_token("export", request.execution_id),
                Tags=snapshot_tags(request, self.settings.stack_name),
            )["DataRepositoryTask"]
        except ClientError as error:
            code, message = _error(error)
            if code == "DataRepositoryTaskExecuting":
                raise SnapshotBusy(
                    f"a data repository task on {file_system_id} is already running"
                ) from error
            raise SnapshotFailed(f"CreateDataRepositoryTask {file_system_id}: {code}: {message}") from error
        logger.info("export started", extra={"task": task["TaskId"], "file_system": file_system_id})
        return Snapshot(
            "export",
            task["TaskId"],
            task["Lifecycle"],
            f"{plan.reason}; paths {', '.join(paths)}; report {report_path}",
        )

    # --- describe ---

    def describe(self, request: DescribeRequest) -> SnapshotState:
        if request.kind == "unsupported" or request.id is None:
            return SnapshotState(
                request.kind, request.id, "UNSUPPORTED", True, False, "no snapshot was taken"
            )
        if request.kind == "backup":
            return self._describe_backup(request.id)
        return self._describe_export(request.id)

    def _describe_backup(self, backup_id: str) -> SnapshotState:
        try:
            found = self.fsx.describe_backups(BackupIds=[backup_id])["Backups"]
        except ClientError as error:
            code, message = _error(error)
            if code != "BackupNotFound":
                raise SnapshotFailed(f"DescribeBackups {backup_id}: {code}: {message}") from error
            found = []
        if not found:
            return SnapshotState(
                "backup", backup_id, "NOT_FOUND", True, False, f"backup {backup_id} not found"
            )
        backup = found[0]
        lifecycle = str(backup.get("Lifecycle"))
        failure = (backup.get("FailureDetails") or {}).get("Message")
        if lifecycle in BACKUP_FINAL:
            detail = failure or f"backup {lifecycle.lower()}"
        else:
            progress = backup.get("ProgressPercent")
            detail = f"backup {lifecycle.lower()}" + (f", {progress}%" if progress is not None else "")
        if lifecycle != "AVAILABLE":
            return SnapshotState("backup", backup_id, lifecycle, lifecycle in BACKUP_FINAL, False, detail)
        cluster = _tags(backup).get("cluster") or self.settings.cluster_name
        retention: Retention | None = None
        if cluster:
            try:
                retention = self.retain(cluster)
            except SnapshotFailed as error:
                # The backup is made; a failed clean-up is reported and runs again next time.
                detail = f"{detail}; retention skipped: {error.reason}"
        return SnapshotState("backup", backup_id, lifecycle, True, True, detail, retention)

    def _describe_export(self, task_id: str) -> SnapshotState:
        try:
            found = self.fsx.describe_data_repository_tasks(TaskIds=[task_id])["DataRepositoryTasks"]
        except ClientError as error:
            code, message = _error(error)
            if code != "DataRepositoryTaskNotFound":
                raise SnapshotFailed(f"DescribeDataRepositoryTasks {task_id}: {code}: {message}") from error
            found = []
        if not found:
            return SnapshotState(
                "export", task_id, "NOT_FOUND", True, False, f"export task {task_id} not found"
            )
        task = found[0]
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

    # --- retention ---

    def retain(self, cluster: str) -> Retention:
        """Delete our AVAILABLE backups of this cluster and file system beyond the newest N."""
        file_system_id = self.settings.file_system_id
        keep = self.settings.retention
        if not file_system_id:
            return Retention(keep)
        kept, doomed = retention_plan(
            self._backups(file_system_id), file_system_id, cluster, keep, self.settings.stack_name
        )
        deleted: list[str] = []
        skipped: list[tuple[str, str]] = []
        for backup_id in doomed:
            try:
                self.fsx.delete_backup(BackupId=backup_id)
            except ClientError as error:
                code, _ = _error(error)
                if code == "BackupNotFound":  # already gone: a retry or someone else
                    deleted.append(backup_id)
                    continue
                if code not in _RETENTION_BUSY:
                    logger.warning("backup not deleted", extra={"backup": backup_id, "code": code})
                skipped.append((backup_id, code))
                continue
            deleted.append(backup_id)
        if deleted or skipped:
            logger.info("retention", extra={"kept": kept, "deleted": deleted, "skipped": skipped})
        return Retention(keep, tuple(kept), tuple(deleted), tuple(skipped))
