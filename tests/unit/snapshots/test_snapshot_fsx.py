"""Exports, FSx's refusals and odd file systems, on botocore's Stubber (moto lacks the data
repository calls), which checks every request against the real API model."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from hyperpod_ha.snapshots.errors import SnapshotBusy, SnapshotFailed
from hyperpod_ha.snapshots.fsx import Fsx
from hyperpod_ha.snapshots.lifecycle import Snapshots
from hyperpod_ha.snapshots.models import DescribeRequest
from hyperpod_ha.snapshots.naming import client_request_token, snapshot_tags
from hyperpod_ha.snapshots.settings import SnapshotSettings
from tests.unit.snapshots.cases.snapshot_support import (
    EXECUTION,
    FS,
    NOW,
    REGION,
    STATE_PATH,
    association,
    described_backup,
    lustre,
    start_request,
)


@pytest.fixture
def stubbed() -> Iterator[tuple[Any, Stubber]]:
    fsx = boto3.client("fsx", region_name=REGION, aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(fsx) as stub:
        yield fsx, stub
        stub.assert_no_pending_responses()


def _expect_file_system(
    stub: Stubber, file_system: dict[str, Any], associations: list[dict[str, Any]] | None
) -> None:
    stub.add_response("describe_file_systems", {"FileSystems": [file_system]}, {"FileSystemIds": [FS]})
    if associations is not None:
        stub.add_response(
            "describe_data_repository_associations",
            {"Associations": associations},
            {"Filters": [{"Name": "file-system-id", "Values": [FS]}]},
        )


def _task(lifecycle: str, **extra: Any) -> dict[str, Any]:
    return {
        "TaskId": "task-0123456789abcdef0",
        "Lifecycle": lifecycle,
        "Type": "EXPORT_TO_REPOSITORY",
        "CreationTime": NOW,
        **extra,
    }


def test_linked_file_system_exports_the_state_path_once(stubbed: tuple[Any, Stubber]) -> None:
    fsx, stub = stubbed
    expected = {
        "Type": "EXPORT_TO_REPOSITORY",
        "FileSystemId": FS,
        "Paths": [STATE_PATH],
        "Report": {
            "Enabled": True,
            "Path": "s3://state-bucket/fsx/hyperpod-ha-reports",
            "Format": "REPORT_CSV_20191124",
            "Scope": "FAILED_FILES_ONLY",
        },
        "ClientRequestToken": client_request_token("export", EXECUTION),
        "Tags": snapshot_tags(start_request()),
    }
    for _ in range(2):  # a retried start asks with the same token: FSx returns the same task
        _expect_file_system(stub, lustre("PERSISTENT_2"), [association()])
        stub.add_response("create_data_repository_task", {"DataRepositoryTask": _task("PENDING")}, expected)
    snapshots = Snapshots(fsx, SnapshotSettings(FS))
    first = snapshots.start(start_request())
    assert snapshots.start(start_request()) == first
    assert first.to_json() == {
        "kind": "export",
        "id": "task-0123456789abcdef0",
        "status": "PENDING",
        "detail": f"linked to S3: exporting the Slurm state to S3; paths {STATE_PATH}; "
        "report s3://state-bucket/fsx/hyperpod-ha-reports",
    }


def test_export_paths_and_report_path_from_settings_and_legacy_link(stubbed: tuple[Any, Stubber]) -> None:
    fsx, stub = stubbed
    legacy = lustre(
        "SCRATCH_2",
        DataRepositoryConfiguration={"ExportPath": "s3://legacy/export/", "Lifecycle": "AVAILABLE"},
    )
    _expect_file_system(stub, legacy, None)
    stub.add_client_error("describe_data_repository_associations", service_error_code="BadRequest")
    stub.add_response(
        "create_data_repository_task",
        {"DataRepositoryTask": _task("PENDING")},
        {
            "Type": "EXPORT_TO_REPOSITORY",
            "FileSystemId": FS,
            "Paths": ["state/a", "state/b"],
            "Report": {
                "Enabled": True,
                "Path": "s3://reports/here",
                "Format": "REPORT_CSV_20191124",
                "Scope": "FAILED_FILES_ONLY",
            },
            "ClientRequestToken": client_request_token("export", EXECUTION),
            "Tags": snapshot_tags(start_request()),
        },
    )
    settings = SnapshotSettings(
        FS, export_paths=("state/a", "state/b"), export_report_path="s3://reports/here"
    )
    assert Snapshots(fsx, settings).start(start_request()).kind == "export"


def test_export_report_defaults_to_the_legacy_export_path(stubbed: tuple[Any, Stubber]) -> None:
    fsx, stub = stubbed
    legacy = lustre("SCRATCH_1", DataRepositoryConfiguration={"ExportPath": "s3://legacy/export/"})
    _expect_file_system(stub, legacy, [])
    stub.add_response("create_data_repository_task", {"DataRepositoryTask": _task("PENDING")})
    snapshot = Snapshots(fsx, SnapshotSettings(FS)).start(start_request())
    assert "report s3://legacy/export/hyperpod-ha-reports" in snapshot.detail


@pytest.mark.parametrize(
    ("file_system", "associations", "detail"),
    [
        (lustre("SCRATCH_2"), [], "no available S3 data repository link"),
        (
            lustre("PERSISTENT_2"),
            [association("/datasets")],
            f"no S3 data repository link covers {STATE_PATH}",
        ),
        ({"FileSystemId": FS, "FileSystemType": "WINDOWS"}, None, "WINDOWS is not FSx for Lustre"),
    ],
)
def test_unsupported_is_a_result_not_an_error(
    stubbed: tuple[Any, Stubber],
    file_system: dict[str, Any],
    associations: list[dict[str, Any]] | None,
    detail: str,
) -> None:
    fsx, stub = stubbed
    _expect_file_system(stub, file_system, associations)
    snapshot = Snapshots(fsx, SnapshotSettings(FS)).start(start_request())
    assert (snapshot.kind, snapshot.id, snapshot.status) == ("unsupported", None, "UNSUPPORTED")
    assert detail in snapshot.detail


def test_no_file_system_configured_is_unsupported_without_any_call(stubbed: tuple[Any, Stubber]) -> None:
    fsx, _ = stubbed
    snapshot = Snapshots(fsx, SnapshotSettings(None)).start(start_request())
    assert snapshot.to_json() == {
        "kind": "unsupported",
        "id": None,
        "status": "UNSUPPORTED",
        "detail": "no file system configured (FILE_SYSTEM_ID is empty)",
    }


def test_backup_in_progress_is_snapshot_busy(stubbed: tuple[Any, Stubber]) -> None:
    fsx, stub = stubbed
    _expect_file_system(stub, lustre("PERSISTENT_2"), [])
    stub.add_response(
        "describe_backups", {"Backups": []}, {"Filters": [{"Name": "file-system-id", "Values": [FS]}]}
    )
    stub.add_client_error(
        "create_backup", service_error_code="BackupInProgress", service_message="one at a time"
    )
    with pytest.raises(SnapshotBusy) as raised:
        Snapshots(fsx, SnapshotSettings(FS)).start(start_request())
    # Lambda reports the class name as errorType; the workflow's Retry matches it.
    assert type(raised.value).__name__ == "SnapshotBusy"


def test_running_export_task_is_snapshot_busy(stubbed: tuple[Any, Stubber]) -> None:
    fsx, stub = stubbed
    _expect_file_system(stub, lustre("PERSISTENT_2"), [association()])
    stub.add_client_error("create_data_repository_task", service_error_code="DataRepositoryTaskExecuting")
    with pytest.raises(SnapshotBusy):
        Snapshots(fsx, SnapshotSettings(FS)).start(start_request())


def test_other_backup_errors_are_snapshot_failed(stubbed: tuple[Any, Stubber]) -> None:
    fsx, stub = stubbed
    _expect_file_system(stub, lustre("PERSISTENT_2"), [])
    stub.add_response("describe_backups", {"Backups": []})
    stub.add_client_error(
        "create_backup", service_error_code="ServiceLimitExceeded", service_message="too many backups"
    )
    with pytest.raises(SnapshotFailed, match=f"CreateBackup {FS}: ServiceLimitExceeded: too many backups"):
        Snapshots(fsx, SnapshotSettings(FS)).start(start_request())


def test_missing_file_system_is_snapshot_failed(stubbed: tuple[Any, Stubber]) -> None:
    fsx, stub = stubbed
    stub.add_client_error(
        "describe_file_systems", service_error_code="FileSystemNotFound", service_message="gone"
    )
    with pytest.raises(SnapshotFailed, match="FileSystemNotFound"):
        Snapshots(fsx, SnapshotSettings(FS)).start(start_request())


def test_association_lookup_failure_is_snapshot_failed(stubbed: tuple[Any, Stubber]) -> None:
    fsx, stub = stubbed
    _expect_file_system(stub, lustre("PERSISTENT_2"), None)
    stub.add_client_error("describe_data_repository_associations", service_error_code="InternalServerError")
    with pytest.raises(SnapshotFailed, match="DescribeDataRepositoryAssociations"):
        Snapshots(fsx, SnapshotSettings(FS)).start(start_request())


def test_associations_are_read_across_pages(stubbed: tuple[Any, Stubber]) -> None:
    fsx, stub = stubbed
    stub.add_response("describe_file_systems", {"FileSystems": [lustre("PERSISTENT_2")]})
    filters = [{"Name": "file-system-id", "Values": [FS]}]
    stub.add_response(
        "describe_data_repository_associations",
        {"Associations": [], "NextToken": "page-2"},
        {"Filters": filters},
    )
    stub.add_response(
        "describe_data_repository_associations",
        {"Associations": [association()]},
        {"Filters": filters, "NextToken": "page-2"},
    )
    stub.add_response("create_data_repository_task", {"DataRepositoryTask": _task("PENDING")})
    assert Snapshots(fsx, SnapshotSettings(FS)).start(start_request()).kind == "export"


@pytest.mark.parametrize(
    ("task", "done", "succeeded", "detail"),
    [
        (
            _task("EXECUTING", Status={"TotalCount": 10, "SucceededCount": 4}),
            False,
            False,
            "export executing, 4 of 10 files",
        ),
        (
            _task("SUCCEEDED", Status={"TotalCount": 10, "SucceededCount": 10, "FailedCount": 0}),
            True,
            True,
            "export succeeded",
        ),
        (
            _task("SUCCEEDED", Status={"TotalCount": 10, "SucceededCount": 9, "FailedCount": 1}),
            True,
            False,
            "1 files failed (see the report in S3)",
        ),
        (
            _task("FAILED", FailureDetails={"Message": "bucket policy denies"}),
            True,
            False,
            "export failed: bucket policy denies",
        ),
        (_task("CANCELED"), True, False, "export canceled"),
    ],
)
def test_describe_export(
    stubbed: tuple[Any, Stubber], task: dict[str, Any], done: bool, succeeded: bool, detail: str
) -> None:
    fsx, stub = stubbed
    stub.add_response(
        "describe_data_repository_tasks",
        {"DataRepositoryTasks": [task]},
        {"TaskIds": ["task-0123456789abcdef0"]},
    )
    state = Snapshots(fsx, SnapshotSettings(FS)).describe(DescribeRequest("export", "task-0123456789abcdef0"))
    assert (state.done, state.succeeded) == (done, succeeded)
    assert detail in state.detail
    assert state.retention is None


def test_describe_failed_and_missing_backups(stubbed: tuple[Any, Stubber]) -> None:
    fsx, stub = stubbed
    failed = {
        "BackupId": "backup-0123456789abcdef0",
        "Lifecycle": "FAILED",
        "FailureDetails": {"Message": "file system was updating"},
        "Type": "USER_INITIATED",
        "CreationTime": NOW,
        "FileSystem": {"FileSystemId": FS},
    }
    stub.add_response("describe_backups", {"Backups": [failed]}, {"BackupIds": ["backup-0123456789abcdef0"]})
    stub.add_client_error("describe_backups", service_error_code="BackupNotFound")
    snapshots = Snapshots(fsx, SnapshotSettings(FS))
    state = snapshots.describe(DescribeRequest("backup", "backup-0123456789abcdef0"))
    assert state.to_json() == {
        "kind": "backup",
        "id": "backup-0123456789abcdef0",
        "status": "FAILED",
        "done": True,
        "succeeded": False,
        "detail": "file system was updating",
    }
    missing = snapshots.describe(DescribeRequest("backup", "backup-0123456789abcdef0"))
    assert (missing.status, missing.done, missing.succeeded) == ("NOT_FOUND", True, False)


def test_describe_unsupported_is_done_at_once(stubbed: tuple[Any, Stubber]) -> None:
    fsx, _ = stubbed
    state = Snapshots(fsx, SnapshotSettings(FS)).describe(
        DescribeRequest.from_event({"kind": "unsupported", "id": None})
    )
    assert (state.done, state.succeeded, state.status) == (True, False, "UNSUPPORTED")


def test_retention_reports_backups_fsx_will_not_delete_yet(stubbed: tuple[Any, Stubber]) -> None:
    fsx, stub = stubbed
    ours = {"created_by": "hyperpod-ha", "cluster": "ml-cluster"}
    backups = [described_backup(f"backup-0000000{i}", i, **ours) for i in range(1, 5)]
    for backup in backups:
        backup.update(Type="USER_INITIATED")
    stub.add_response("describe_backups", {"Backups": backups})
    stub.add_client_error(
        "delete_backup", service_error_code="BackupRestoring", expected_params={"BackupId": "backup-00000002"}
    )
    stub.add_client_error(
        "delete_backup", service_error_code="BackupNotFound", expected_params={"BackupId": "backup-00000003"}
    )
    stub.add_response(
        "delete_backup",
        {"BackupId": "backup-00000004", "Lifecycle": "DELETED"},
        {"BackupId": "backup-00000004"},
    )
    retention = Snapshots(fsx, SnapshotSettings(FS, retention=1)).retain("ml-cluster")
    assert retention.to_json() == {
        "keep": 1,
        "kept": ["backup-00000001"],
        "deleted": ["backup-00000003", "backup-00000004"],
        "skipped": [{"id": "backup-00000002", "reason": "BackupRestoring"}],
    }


def test_a_failed_clean_up_does_not_fail_the_backup(stubbed: tuple[Any, Stubber]) -> None:
    fsx, stub = stubbed
    available = described_backup(
        "backup-0123456789abcdef0", 0, created_by="hyperpod-ha", cluster="ml-cluster"
    )
    available.update(Type="USER_INITIATED")
    stub.add_response("describe_backups", {"Backups": [available]})
    stub.add_client_error(
        "describe_backups", service_error_code="InternalServerError", service_message="try later"
    )
    state = Snapshots(fsx, SnapshotSettings(FS)).describe(
        DescribeRequest("backup", "backup-0123456789abcdef0")
    )
    assert (state.done, state.succeeded, state.retention) == (True, True, None)
    assert "retention skipped: DescribeBackups" in state.detail


@pytest.mark.parametrize(
    ("lookup", "operation", "not_found", "call"),
    [
        ("backup", "describe_backups", "BackupNotFound", "DescribeBackups"),
        (
            "export_task",
            "describe_data_repository_tasks",
            "DataRepositoryTaskNotFound",
            "DescribeDataRepositoryTasks",
        ),
    ],
)
def test_a_lookup_is_none_when_fsx_says_not_found_and_fails_naming_its_call_otherwise(
    stubbed: tuple[Any, Stubber], lookup: str, operation: str, not_found: str, call: str
) -> None:
    fsx, stub = stubbed
    stub.add_client_error(operation, service_error_code=not_found)
    stub.add_client_error(operation, service_error_code="InternalServerError")
    find = getattr(Fsx(fsx), lookup)
    assert find("id-0123456789abcdef0") is None
    with pytest.raises(SnapshotFailed, match=f"{call} id-0123456789abcdef0: InternalServerError"):
        find("id-0123456789abcdef0")
