"""The FSx calls snapshots make: describing file systems, associations, backups and data
repository tasks, creating backups and export tasks, deleting backups.

FSx's refusals become :class:`SnapshotBusy` (one backup or task at a time: the workflow
retries) or :class:`SnapshotFailed` (waiting will not help); "not found" is ``None``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from hyperpod_ha.aws_errors import error_code
from hyperpod_ha.observability import logger
from hyperpod_ha.snapshots.errors import SnapshotBusy, SnapshotFailed

if TYPE_CHECKING:
    from mypy_boto3_fsx import FSxClient
    from mypy_boto3_fsx.type_defs import TagTypeDef

# Answered by file systems with the legacy link, or none that supports associations.
_NO_ASSOCIATIONS = frozenset({"BadRequest", "InvalidDataRepositoryType", "DataRepositoryAssociationNotFound"})


def _one(
    call: str, subject: str, not_found: str, describe: Callable[[], Sequence[Mapping[str, Any]]]
) -> Mapping[str, Any] | None:
    """What ``describe`` finds of ``subject``; ``None`` when FSx answers ``not_found``."""
    try:
        found = describe()
    except ClientError as error:
        if error_code(error) != not_found:
            raise _failed(call, subject, error) from error
        return None
    return found[0] if found else None


def _failed(call: str, subject: str, error: ClientError) -> SnapshotFailed:
    message = str(error.response.get("Error", {}).get("Message", ""))[:300]
    return SnapshotFailed(f"{call} {subject}: {error_code(error)}: {message}")


class Fsx:
    def __init__(self, fsx: FSxClient) -> None:
        self.client = fsx

    def file_system(self, file_system_id: str) -> Mapping[str, Any]:
        try:
            found = self.client.describe_file_systems(FileSystemIds=[file_system_id])["FileSystems"]
        except ClientError as error:
            raise _failed("DescribeFileSystems", file_system_id, error) from error
        if not found:
            raise SnapshotFailed(f"file system {file_system_id} not found")
        return found[0]

    def associations(self, file_system_id: str) -> list[Mapping[str, Any]]:
        associations: list[Mapping[str, Any]] = []
        # No botocore paginator exists for this call.
        request: dict[str, Any] = {"Filters": [{"Name": "file-system-id", "Values": [file_system_id]}]}
        try:
            while True:
                page = self.client.describe_data_repository_associations(**request)
                associations += page.get("Associations", [])
                if not page.get("NextToken"):
                    return associations
                request["NextToken"] = page["NextToken"]
        except ClientError as error:
            code = error_code(error)
            if code in _NO_ASSOCIATIONS:
                logger.info(
                    "no data repository associations", extra={"file_system": file_system_id, "code": code}
                )
                return []
            raise SnapshotFailed(f"DescribeDataRepositoryAssociations {file_system_id}: {code}") from error

    def backups(self, file_system_id: str) -> list[Mapping[str, Any]]:
        backups: list[Mapping[str, Any]] = []
        try:
            for page in self.client.get_paginator("describe_backups").paginate(
                Filters=[{"Name": "file-system-id", "Values": [file_system_id]}]
            ):
                backups += page.get("Backups", [])
        except ClientError as error:
            raise _failed("DescribeBackups", file_system_id, error) from error
        return backups

    def create_backup(self, file_system_id: str, token: str, tags: Sequence[TagTypeDef]) -> Mapping[str, Any]:
        try:
            return self.client.create_backup(
                FileSystemId=file_system_id, ClientRequestToken=token, Tags=tags
            )["Backup"]
        except ClientError as error:
            if error_code(error) == "BackupInProgress":
                raise SnapshotBusy(f"a backup of {file_system_id} is already in progress") from error
            raise _failed("CreateBackup", file_system_id, error) from error

    def create_export(
        self,
        file_system_id: str,
        paths: Sequence[str],
        report_path: str,
        token: str,
        tags: Sequence[TagTypeDef],
    ) -> Mapping[str, Any]:
        try:
            return self.client.create_data_repository_task(
                Type="EXPORT_TO_REPOSITORY",
                FileSystemId=file_system_id,
                Paths=list(paths),
                Report={
                    "Enabled": True,
                    "Path": report_path,
                    "Format": "REPORT_CSV_20191124",
                    "Scope": "FAILED_FILES_ONLY",
                },
                ClientRequestToken=token,
                Tags=tags,
            )["DataRepositoryTask"]
        except ClientError as error:
            if error_code(error) == "DataRepositoryTaskExecuting":
                raise SnapshotBusy(
                    f"a data repository task on {file_system_id} is already running"
                ) from error
            raise _failed("CreateDataRepositoryTask", file_system_id, error) from error

    def backup(self, backup_id: str) -> Mapping[str, Any] | None:
        return _one(
            "DescribeBackups",
            backup_id,
            "BackupNotFound",
            lambda: self.client.describe_backups(BackupIds=[backup_id])["Backups"],
        )

    def export_task(self, task_id: str) -> Mapping[str, Any] | None:
        return _one(
            "DescribeDataRepositoryTasks",
            task_id,
            "DataRepositoryTaskNotFound",
            lambda: self.client.describe_data_repository_tasks(TaskIds=[task_id])["DataRepositoryTasks"],
        )

    def delete_backup(self, backup_id: str) -> str | None:
        """``None`` once the backup is gone (already gone too: a retry, or someone else); else
        the code FSx refused with."""
        try:
            self.client.delete_backup(BackupId=backup_id)
        except ClientError as error:
            code = error_code(error)
            return None if code == "BackupNotFound" else code
        return None
