"""Snapshots of the Slurm state: backups (moto FSx), exports and errors (Stubber), retention.

moto's FSx keeps backups and tags but lacks the data repository calls and ignores
ClientRequestToken; those paths use botocore's Stubber, which checks every request against
the real API model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.stub import Stubber
from moto import mock_aws
from moto.fsx.models import fsx_backends

from hyperpod_ha.settings import ConfigurationError
from hyperpod_ha.snapshot import (
    DescribeRequest,
    InvalidSnapshotRequest,
    SnapshotBusy,
    SnapshotFailed,
    Snapshots,
    SnapshotSettings,
    StartRequest,
    client_request_token,
    plan_snapshot,
    retention_plan,
    snapshot_tags,
    tag_value,
)

REGION = "us-west-2"
ACCOUNT = "123456789012"  # moto's default account
EXECUTION = "arn:aws:states:us-west-2:123456789012:execution:FailoverVerification:ml-cluster-42"
FS = "fs-0123456789abcdef0"
STATE_PATH = "aws/hyperpod/ml-cluster/var/spool/slurmctld"
NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


def _start(**changes: str) -> StartRequest:
    event = {
        "cluster": "ml-cluster",
        "reason": "failover verified",
        "verdict": "FAILED_OVER",
        "execution_id": EXECUTION,
    }
    event.update(changes)
    return StartRequest.from_event(event)


def _lustre(deployment: str, **lustre: Any) -> dict[str, Any]:
    return {
        "FileSystemId": FS,
        "FileSystemType": "LUSTRE",
        "LustreConfiguration": {"DeploymentType": deployment, **lustre},
    }


def _association(
    path: str = "/", repository: str = "s3://state-bucket/fsx", lifecycle: str = "AVAILABLE"
) -> dict[str, Any]:
    return {
        "AssociationId": "dra-0123456789abcdef0",
        "FileSystemPath": path,
        "DataRepositoryPath": repository,
        "Lifecycle": lifecycle,
    }


# --- pure parts ------------------------------------------------------------------------------


@pytest.mark.parametrize("purpose", ["backup", "export"])
def test_client_request_token_is_valid_stable_and_per_execution(purpose: str) -> None:
    long_arn = EXECUTION + "x" * 200
    for execution in (EXECUTION, long_arn, "local-run"):
        token = client_request_token(purpose, execution)
        assert re.fullmatch(r"[A-Za-z0-9_.-]{1,63}", token)
        assert token == client_request_token(purpose, execution)
    assert client_request_token(purpose, EXECUTION) != client_request_token(purpose, EXECUTION + "-2")
    assert client_request_token("backup", EXECUTION) != client_request_token("export", EXECUTION)


def test_tag_values_keep_only_what_fsx_accepts() -> None:
    assert tag_value("DOWN: no controller (ping failed), 100%!") == "DOWN: no controller _ping failed__ 100__"
    assert tag_value(EXECUTION) == EXECUTION
    assert tag_value("Zürich-ø") == "Zürich-ø"
    assert len(tag_value("r" * 1000)) == 256


def test_snapshot_tags() -> None:
    tags = {tag["Key"]: tag["Value"] for tag in snapshot_tags(_start())}
    assert tags == {
        "created-by": "hyperpod-ha",
        "cluster": "ml-cluster",
        "execution": EXECUTION,
        "verdict": "FAILED_OVER",
        "reason": "failover verified",
    }
    assert "reason" not in {tag["Key"] for tag in snapshot_tags(_start(reason=""))}


@pytest.mark.parametrize(
    ("file_system", "associations", "kind", "reason"),
    [
        (_lustre("PERSISTENT_2"), [], "backup", "PERSISTENT_2 file system without a data repository link"),
        (_lustre("PERSISTENT_1"), [], "backup", "PERSISTENT_1 file system without a data repository link"),
        (
            _lustre("PERSISTENT_2"),
            [_association()],
            "export",
            "linked to S3: exporting the Slurm state to S3",
        ),
        (_lustre("SCRATCH_2"), [_association("/aws")], "export", "deployment type SCRATCH_2: exporting"),
        (
            _lustre(
                "SCRATCH_1",
                DataRepositoryConfiguration={"ExportPath": "s3://legacy/export", "Lifecycle": "AVAILABLE"},
            ),
            [],
            "export",
            "deployment type SCRATCH_1: exporting",
        ),
        (
            _lustre("SCRATCH_2"),
            [],
            "unsupported",
            "cannot back it up (deployment type SCRATCH_2) and it has no",
        ),
        (
            _lustre("PERSISTENT_2"),
            [_association(lifecycle="CREATING")],
            "unsupported",
            "cannot back it up (linked to S3) and it has no available S3 data repository link",
        ),
        (
            _lustre("PERSISTENT_2"),
            [_association("/datasets")],
            "unsupported",
            f"no S3 data repository link covers {STATE_PATH}",
        ),
        (
            {"FileSystemId": FS, "FileSystemType": "OPENZFS"},
            [],
            "unsupported",
            "OPENZFS is not FSx for Lustre",
        ),
    ],
)
def test_plan(
    file_system: dict[str, Any], associations: list[dict[str, Any]], kind: str, reason: str
) -> None:
    plan = plan_snapshot(file_system, associations, [STATE_PATH])
    assert plan.kind == kind
    assert reason in plan.reason


def test_plan_picks_the_association_that_covers_the_state_path() -> None:
    associations = [
        _association("/", "s3://root"),
        _association("/aws/hyperpod", "s3://state"),
        _association("/aw", "s3://no"),
    ]
    plan = plan_snapshot(_lustre("PERSISTENT_2"), associations, [STATE_PATH])
    assert [target.repository_path for target in plan.targets] == ["s3://state"]


def _backup(
    backup_id: str, age_hours: int, lifecycle: str = "AVAILABLE", fs: str | None = FS, **tags: str
) -> dict[str, Any]:
    backup: dict[str, Any] = {
        "BackupId": backup_id,
        "Lifecycle": lifecycle,
        "CreationTime": NOW - timedelta(hours=age_hours),
        "Tags": [{"Key": key.replace("_", "-"), "Value": value} for key, value in tags.items()],
    }
    if fs:
        backup["FileSystem"] = {"FileSystemId": fs}
    return backup


def test_retention_plan_only_ever_deletes_our_old_backups() -> None:
    ours = {"created_by": "hyperpod-ha", "cluster": "ml-cluster"}
    backups = [
        _backup("backup-00000001", 1, **ours),
        _backup("backup-00000002", 2, **ours),
        _backup("backup-00000003", 3, **ours),
        _backup("backup-00000004", 4, **ours),
        _backup(
            "backup-00000005", 0, lifecycle="CREATING", **ours
        ),  # not AVAILABLE: never counted or deleted
        _backup("backup-0000000a", 50),  # no tags: someone else's
        _backup("backup-0000000b", 50, created_by="aws-backup", cluster="ml-cluster"),
        _backup("backup-0000000c", 50, created_by="hyperpod-ha", cluster="other-cluster"),
        _backup("backup-0000000d", 50, fs="fs-0fedcba987654321f", **ours),  # another file system
    ]
    kept, doomed = retention_plan(backups, FS, "ml-cluster", keep=2)
    assert kept == ["backup-00000001", "backup-00000002"]
    assert doomed == ["backup-00000003", "backup-00000004"]


def test_settings_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FILE_SYSTEM_ID", FS)
    monkeypatch.setenv("EXPORT_PATHS", "/aws/hyperpod/a/var/spool/slurmctld/, aws/hyperpod/a/opt/slurm/etc ,")
    monkeypatch.delenv("BACKUP_RETENTION", raising=False)
    settings = SnapshotSettings.from_environment()
    assert settings.retention == 7
    assert settings.paths_for("a") == ("aws/hyperpod/a/var/spool/slurmctld", "aws/hyperpod/a/opt/slurm/etc")
    assert SnapshotSettings(FS).paths_for("ml-cluster") == (STATE_PATH,)
    monkeypatch.setenv("BACKUP_RETENTION", "0")
    with pytest.raises(ConfigurationError, match="at least 1"):
        SnapshotSettings.from_environment()


@pytest.mark.parametrize(
    ("event", "message"),
    [
        ({"kind": "tape", "id": "x"}, "kind must be one of"),
        ({"kind": "backup"}, "id is required"),
        ({"kind": "backup", "id": "task-0123456789abcdef0"}, "id of a backup starts with 'backup-'"),
        ({"kind": "export", "id": "backup-01234567"}, "id of a export starts with 'task-'"),
    ],
)
def test_bad_describe_requests(event: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidSnapshotRequest, match=message):
        DescribeRequest.from_event(event)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"cluster": ""}, "cluster is required"),
        ({"cluster": "a b"}, "not a HyperPod cluster name"),
        ({"execution_id": ""}, "execution_id"),
    ],
)
def test_bad_start_requests(changes: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidSnapshotRequest, match=message):
        _start(**changes)


# --- backups on moto -------------------------------------------------------------------------


def answer(client: Any, operation: str, response: dict[str, Any]) -> list[dict[str, Any]]:
    """Answer an FSx operation moto lacks with ``response``; botocore still validates the request."""
    requests: list[dict[str, Any]] = []

    def reply(params: dict[str, Any], **_: Any) -> tuple[AWSResponse, dict[str, Any]]:
        requests.append(json.loads(params["body"]))
        return AWSResponse("", 200, {}, None), response  # type: ignore[arg-type]

    client.meta.events.register(f"before-call.fsx.{operation}", reply)
    return requests


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    with mock_aws():
        yield


def _moto_file_system(fsx: Any, deployment: str = "PERSISTENT_2") -> str:
    return str(
        fsx.create_file_system(
            FileSystemType="LUSTRE",
            StorageCapacity=1200,
            SubnetIds=["subnet-0123456789abcdef0"],
            LustreConfiguration={"DeploymentType": deployment, "PerUnitStorageThroughput": 125},
        )["FileSystem"]["FileSystemId"]
    )


def _moto_backup(backup_id: str | None) -> Any:
    assert backup_id
    return fsx_backends[ACCOUNT][REGION].backups[backup_id]


def _all_backups(fsx: Any) -> dict[str, dict[str, str]]:
    return {
        b["BackupId"]: {t["Key"]: t["Value"] for t in b.get("Tags", [])}
        for b in fsx.describe_backups()["Backups"]
    }


def test_backup_is_made_once_per_execution(aws: None) -> None:
    fsx = boto3.client("fsx")
    fs = _moto_file_system(fsx)
    associations = answer(fsx, "DescribeDataRepositoryAssociations", {"Associations": []})
    snapshots = Snapshots(fsx, SnapshotSettings(fs))

    first = snapshots.start(_start())
    assert (first.kind, first.status) == ("backup", "CREATING")
    assert first.id
    assert first.id.startswith("backup-")
    assert associations == [{"Filters": [{"Name": "file-system-id", "Values": [fs]}]}]
    assert _moto_backup(first.id).client_request_token == client_request_token("backup", EXECUTION)
    assert _all_backups(fsx)[first.id] == {tag["Key"]: tag["Value"] for tag in snapshot_tags(_start())}

    # The workflow retries the task (its answer was lost): no second backup.
    again = snapshots.start(_start())
    assert again.id == first.id
    assert list(_all_backups(fsx)) == [first.id]
    # Another execution does make a new one.
    other = snapshots.start(_start(execution_id=EXECUTION + "-2"))
    assert other.id != first.id
    assert len(_all_backups(fsx)) == 2


def test_describe_polls_until_available_then_prunes_only_our_old_backups(aws: None) -> None:
    fsx = boto3.client("fsx")
    fs = _moto_file_system(fsx)
    other_fs = _moto_file_system(fsx)
    answer(fsx, "DescribeDataRepositoryAssociations", {"Associations": []})
    snapshots = Snapshots(fsx, SnapshotSettings(fs, retention=2))

    ours = [snapshots.start(_start(execution_id=f"{EXECUTION}-{i}")).id for i in range(4)]
    foreign = [
        fsx.create_backup(FileSystemId=fs)["Backup"]["BackupId"],
        fsx.create_backup(
            FileSystemId=fs,
            Tags=[{"Key": "created-by", "Value": "someone"}, {"Key": "cluster", "Value": "ml-cluster"}],
        )["Backup"]["BackupId"],
        fsx.create_backup(
            FileSystemId=fs,
            Tags=[{"Key": "created-by", "Value": "hyperpod-ha"}, {"Key": "cluster", "Value": "other"}],
        )["Backup"]["BackupId"],
        fsx.create_backup(
            FileSystemId=other_fs,
            Tags=[{"Key": "created-by", "Value": "hyperpod-ha"}, {"Key": "cluster", "Value": "ml-cluster"}],
        )["Backup"]["BackupId"],
    ]
    for age, backup_id in enumerate(reversed([*ours, *foreign])):
        _moto_backup(backup_id).creation_time = NOW.timestamp() - age * 3600
        _moto_backup(backup_id).lifecycle = "AVAILABLE"
    newest = ours[-1]
    assert newest is not None
    _moto_backup(newest).lifecycle = "CREATING"

    polling = snapshots.describe(DescribeRequest("backup", newest))
    assert (polling.done, polling.succeeded, polling.status, polling.retention) == (
        False,
        False,
        "CREATING",
        None,
    )

    _moto_backup(newest).lifecycle = "AVAILABLE"
    state = snapshots.describe(DescribeRequest("backup", newest))
    assert (state.done, state.succeeded, state.status) == (True, True, "AVAILABLE")
    assert state.retention is not None
    assert state.retention.kept == (ours[3], ours[2])
    assert set(state.retention.deleted) == {ours[0], ours[1]}
    remaining = set(_all_backups(fsx))
    assert remaining == {ours[2], ours[3], *foreign}
    assert state.to_json()["retention"]["deleted"] == list(state.retention.deleted)


def test_retain_without_a_file_system_does_nothing() -> None:
    assert (
        Snapshots(boto3.client("fsx", region_name=REGION), SnapshotSettings(None))
        .retain("ml-cluster")
        .deleted
        == ()
    )


# --- exports, errors and odd file systems (Stubber) ------------------------------------------


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
        "Tags": snapshot_tags(_start()),
    }
    for _ in range(2):  # a retried start asks with the same token: FSx returns the same task
        _expect_file_system(stub, _lustre("PERSISTENT_2"), [_association()])
        stub.add_response("create_data_repository_task", {"DataRepositoryTask": _task("PENDING")}, expected)
    snapshots = Snapshots(fsx, SnapshotSettings(FS))
    first = snapshots.start(_start())
    assert snapshots.start(_start()) == first
    assert first.to_json() == {
        "kind": "export",
        "id": "task-0123456789abcdef0",
        "status": "PENDING",
        "detail": f"linked to S3: exporting the Slurm state to S3; paths {STATE_PATH}; "
        "report s3://state-bucket/fsx/hyperpod-ha-reports",
    }


def test_export_paths_and_report_path_from_settings_and_legacy_link(stubbed: tuple[Any, Stubber]) -> None:
    fsx, stub = stubbed
    legacy = _lustre(
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
            "Tags": snapshot_tags(_start()),
        },
    )
    settings = SnapshotSettings(
        FS, export_paths=("state/a", "state/b"), export_report_path="s3://reports/here"
    )
    assert Snapshots(fsx, settings).start(_start()).kind == "export"


def test_export_report_defaults_to_the_legacy_export_path(stubbed: tuple[Any, Stubber]) -> None:
    fsx, stub = stubbed
    legacy = _lustre("SCRATCH_1", DataRepositoryConfiguration={"ExportPath": "s3://legacy/export/"})
    _expect_file_system(stub, legacy, [])
    stub.add_response("create_data_repository_task", {"DataRepositoryTask": _task("PENDING")})
    snapshot = Snapshots(fsx, SnapshotSettings(FS)).start(_start())
    assert "report s3://legacy/export/hyperpod-ha-reports" in snapshot.detail


@pytest.mark.parametrize(
    ("file_system", "associations", "detail"),
    [
        (_lustre("SCRATCH_2"), [], "no available S3 data repository link"),
        (
            _lustre("PERSISTENT_2"),
            [_association("/datasets")],
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
    snapshot = Snapshots(fsx, SnapshotSettings(FS)).start(_start())
    assert (snapshot.kind, snapshot.id, snapshot.status) == ("unsupported", None, "UNSUPPORTED")
    assert detail in snapshot.detail


def test_no_file_system_configured_is_unsupported_without_any_call(stubbed: tuple[Any, Stubber]) -> None:
    fsx, _ = stubbed
    snapshot = Snapshots(fsx, SnapshotSettings(None)).start(_start())
    assert snapshot.to_json() == {
        "kind": "unsupported",
        "id": None,
        "status": "UNSUPPORTED",
        "detail": "no file system configured (FILE_SYSTEM_ID is empty)",
    }


def test_backup_in_progress_is_snapshot_busy(stubbed: tuple[Any, Stubber]) -> None:
    fsx, stub = stubbed
    _expect_file_system(stub, _lustre("PERSISTENT_2"), [])
    stub.add_response(
        "describe_backups", {"Backups": []}, {"Filters": [{"Name": "file-system-id", "Values": [FS]}]}
    )
    stub.add_client_error(
        "create_backup", service_error_code="BackupInProgress", service_message="one at a time"
    )
    with pytest.raises(SnapshotBusy) as raised:
        Snapshots(fsx, SnapshotSettings(FS)).start(_start())
    # Lambda reports the class name as errorType; the workflow's Retry matches it.
    assert type(raised.value).__name__ == "SnapshotBusy"


def test_running_export_task_is_snapshot_busy(stubbed: tuple[Any, Stubber]) -> None:
    fsx, stub = stubbed
    _expect_file_system(stub, _lustre("PERSISTENT_2"), [_association()])
    stub.add_client_error("create_data_repository_task", service_error_code="DataRepositoryTaskExecuting")
    with pytest.raises(SnapshotBusy):
        Snapshots(fsx, SnapshotSettings(FS)).start(_start())


def test_other_backup_errors_are_snapshot_failed(stubbed: tuple[Any, Stubber]) -> None:
    fsx, stub = stubbed
    _expect_file_system(stub, _lustre("PERSISTENT_2"), [])
    stub.add_response("describe_backups", {"Backups": []})
    stub.add_client_error(
        "create_backup", service_error_code="ServiceLimitExceeded", service_message="too many backups"
    )
    with pytest.raises(SnapshotFailed, match=f"CreateBackup {FS}: ServiceLimitExceeded: too many backups"):
        Snapshots(fsx, SnapshotSettings(FS)).start(_start())


def test_missing_file_system_is_snapshot_failed(stubbed: tuple[Any, Stubber]) -> None:
    fsx, stub = stubbed
    stub.add_client_error(
        "describe_file_systems", service_error_code="FileSystemNotFound", service_message="gone"
    )
    with pytest.raises(SnapshotFailed, match="FileSystemNotFound"):
        Snapshots(fsx, SnapshotSettings(FS)).start(_start())


def test_association_lookup_failure_is_snapshot_failed(stubbed: tuple[Any, Stubber]) -> None:
    fsx, stub = stubbed
    _expect_file_system(stub, _lustre("PERSISTENT_2"), None)
    stub.add_client_error("describe_data_repository_associations", service_error_code="InternalServerError")
    with pytest.raises(SnapshotFailed, match="DescribeDataRepositoryAssociations"):
        Snapshots(fsx, SnapshotSettings(FS)).start(_start())


def test_associations_are_read_across_pages(stubbed: tuple[Any, Stubber]) -> None:
    fsx, stub = stubbed
    stub.add_response("describe_file_systems", {"FileSystems": [_lustre("PERSISTENT_2")]})
    filters = [{"Name": "file-system-id", "Values": [FS]}]
    stub.add_response(
        "describe_data_repository_associations",
        {"Associations": [], "NextToken": "page-2"},
        {"Filters": filters},
    )
    stub.add_response(
        "describe_data_repository_associations",
        {"Associations": [_association()]},
        {"Filters": filters, "NextToken": "page-2"},
    )
    stub.add_response("create_data_repository_task", {"DataRepositoryTask": _task("PENDING")})
    assert Snapshots(fsx, SnapshotSettings(FS)).start(_start()).kind == "export"


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
    backups = [_backup(f"backup-0000000{i}", i, **ours) for i in range(1, 5)]
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
    available = _backup("backup-0123456789abcdef0", 0, created_by="hyperpod-ha", cluster="ml-cluster")
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
