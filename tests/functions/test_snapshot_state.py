"""SnapshotStateFunction's handler: moto FSx for backups, Stubber where moto has no answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber
from moto import mock_aws
from moto.fsx.models import fsx_backends

from hyperpod_ha.errors import ConfigurationError
from hyperpod_ha.snapshots.errors import InvalidSnapshotRequest, SnapshotBusy
from tests.conftest import load_function_module
from tests.unit.snapshots.cases.snapshot_support import answer

REGION = "us-west-2"
ACCOUNT = "123456789012"  # moto's default account
EXECUTION = "arn:aws:states:us-west-2:123456789012:execution:FailoverVerification:ml-cluster-42"


@dataclass
class Context:
    function_name: str = "SnapshotStateFunction"
    memory_limit_in_mb: int = 256
    invoked_function_arn: str = "arn:aws:lambda:us-west-2:123456789012:function:SnapshotStateFunction"
    aws_request_id: str = "request-1"


def _fsx(app: ModuleType) -> Any:
    """The container's FSx client (made with its settings on first use)."""
    return app._function().snapshots.fsx.client


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("CLUSTER_NAME", "ml-cluster")
    monkeypatch.setenv("BACKUP_RETENTION", "2")
    monkeypatch.setenv("MIN_BACKUP_INTERVAL_MINUTES", "0")  # retention is the subject here
    for name in ("EXPORT_PATHS", "EXPORT_REPORT_PATH", "FILE_SYSTEM_ID"):
        monkeypatch.delenv(name, raising=False)
    with mock_aws():
        yield monkeypatch


def _file_system() -> str:
    return str(
        boto3.client("fsx").create_file_system(
            FileSystemType="LUSTRE",
            StorageCapacity=1200,
            SubnetIds=["subnet-0123456789abcdef0"],
            LustreConfiguration={"DeploymentType": "PERSISTENT_2", "PerUnitStorageThroughput": 125},
        )["FileSystem"]["FileSystemId"]
    )


def _start_event(execution: str = EXECUTION) -> dict[str, Any]:
    return {
        "action": "start",
        "cluster": "ml-cluster",
        "reason": "verified",
        "verdict": "HEALTHY",
        "execution_id": execution,
    }


def test_start_describe_and_retain_through_the_handler(env: pytest.MonkeyPatch) -> None:
    fs = _file_system()
    env.setenv("FILE_SYSTEM_ID", fs)
    app = load_function_module("snapshot_state", fresh=True)
    answer(_fsx(app), "DescribeDataRepositoryAssociations", {"Associations": []})

    started = app.lambda_handler(_start_event(), Context())
    assert started["kind"] == "backup"
    assert started["status"] == "CREATING"
    assert app.lambda_handler(_start_event(), Context()) == {
        **started,
        "detail": "backup of this run already made",
    }
    json.dumps(started)  # the state machine gets plain JSON

    # moto keeps a backup CREATING (the embedded stack's double makes it AVAILABLE when
    # described): set it, so this test means the same under both.
    backend = fsx_backends[ACCOUNT][REGION]
    backend.backups[started["id"]].lifecycle = "CREATING"
    polled = app.lambda_handler({"action": "describe", "kind": "backup", "id": started["id"]}, Context())
    assert (polled["done"], polled["succeeded"], polled["status"]) == (False, False, "CREATING")

    older = [app.lambda_handler(_start_event(f"{EXECUTION}-{i}"), Context())["id"] for i in range(3)]
    for age, backup_id in enumerate([started["id"], *reversed(older)]):
        backend.backups[backup_id].lifecycle = "AVAILABLE"
        backend.backups[backup_id].creation_time = 1_750_000_000 - age * 3600

    done = app.lambda_handler({"action": "describe", "kind": "backup", "id": started["id"]}, Context())
    assert (done["done"], done["succeeded"], done["status"]) == (True, True, "AVAILABLE")
    assert done["retention"]["kept"] == [started["id"], older[2]]
    assert sorted(done["retention"]["deleted"]) == sorted(older[:2])
    assert set(backend.backups) == {started["id"], older[2]}

    assert app.lambda_handler({"action": "retain"}, Context())["retention"]["deleted"] == []


def test_busy_file_system_raises_snapshot_busy_for_the_retry(env: pytest.MonkeyPatch) -> None:
    env.setenv("FILE_SYSTEM_ID", "fs-0123456789abcdef0")
    app = load_function_module("snapshot_state", fresh=True)
    with Stubber(_fsx(app)) as stub:
        stub.add_response(
            "describe_file_systems",
            {
                "FileSystems": [
                    {
                        "FileSystemId": "fs-0123456789abcdef0",
                        "FileSystemType": "LUSTRE",
                        "LustreConfiguration": {"DeploymentType": "PERSISTENT_2"},
                    }
                ]
            },
        )
        stub.add_response("describe_data_repository_associations", {"Associations": []})
        stub.add_response("describe_backups", {"Backups": []})
        stub.add_client_error("create_backup", service_error_code="BackupInProgress")
        with pytest.raises(SnapshotBusy) as raised:
            app.lambda_handler(_start_event(), Context())
    assert type(raised.value).__name__ == "SnapshotBusy"


def test_export_uses_the_configured_paths(env: pytest.MonkeyPatch) -> None:
    env.setenv("FILE_SYSTEM_ID", "fs-0123456789abcdef0")
    env.setenv(
        "EXPORT_PATHS", "aws/hyperpod/ml-cluster/var/spool/slurmctld,aws/hyperpod/ml-cluster/opt/slurm/etc"
    )
    env.setenv("EXPORT_REPORT_PATH", "s3://reports/hyperpod")
    app = load_function_module("snapshot_state", fresh=True)
    with Stubber(_fsx(app)) as stub:
        stub.add_response(
            "describe_file_systems",
            {
                "FileSystems": [
                    {
                        "FileSystemId": "fs-0123456789abcdef0",
                        "FileSystemType": "LUSTRE",
                        "LustreConfiguration": {"DeploymentType": "SCRATCH_2"},
                    }
                ]
            },
        )
        stub.add_response(
            "describe_data_repository_associations",
            {
                "Associations": [
                    {"FileSystemPath": "/", "DataRepositoryPath": "s3://state", "Lifecycle": "AVAILABLE"}
                ]
            },
        )
        stub.add_response(
            "create_data_repository_task",
            {
                "DataRepositoryTask": {
                    "TaskId": "task-0123456789abcdef0",
                    "Lifecycle": "PENDING",
                    "Type": "EXPORT_TO_REPOSITORY",
                    "CreationTime": 0,
                }
            },
            {
                "Type": "EXPORT_TO_REPOSITORY",
                "FileSystemId": "fs-0123456789abcdef0",
                "Paths": [
                    "aws/hyperpod/ml-cluster/var/spool/slurmctld",
                    "aws/hyperpod/ml-cluster/opt/slurm/etc",
                ],
                "Report": {
                    "Enabled": True,
                    "Path": "s3://reports/hyperpod",
                    "Format": "REPORT_CSV_20191124",
                    "Scope": "FAILED_FILES_ONLY",
                },
                "ClientRequestToken": ANY,
                "Tags": ANY,
            },
        )
        result = app.lambda_handler(_start_event(), Context())
    assert (result["kind"], result["id"], result["status"]) == ("export", "task-0123456789abcdef0", "PENDING")


def test_no_file_system_is_unsupported(env: pytest.MonkeyPatch) -> None:
    app = load_function_module("snapshot_state", fresh=True)
    result = app.lambda_handler(_start_event(), Context())
    assert (result["kind"], result["id"]) == ("unsupported", None)
    described = app.lambda_handler({"action": "describe", "kind": "unsupported", "id": None}, Context())
    assert (described["done"], described["succeeded"]) == (True, False)


@pytest.mark.parametrize(
    "event",
    [
        {},
        {"action": "delete"},
        {"action": "start", "cluster": "ml-cluster"},
        {"action": "describe", "kind": "backup"},
    ],
)
def test_bad_requests_are_typed_rejections(env: pytest.MonkeyPatch, event: dict[str, Any]) -> None:
    app = load_function_module("snapshot_state", fresh=True)
    with pytest.raises(InvalidSnapshotRequest):
        app.lambda_handler(event, Context())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"CLUSTER_NAME": None}, "CLUSTER_NAME is not set"),
        ({"BACKUP_RETENTION": "seven"}, "BACKUP_RETENTION is not an integer"),
    ],
)
def test_a_missing_or_malformed_variable_fails_before_the_event(
    env: pytest.MonkeyPatch, change: dict[str, str | None], message: str
) -> None:
    for name, value in change.items():
        if value is None:
            env.delenv(name)
        else:
            env.setenv(name, value)
    app = load_function_module("snapshot_state", fresh=True)
    with pytest.raises(ConfigurationError, match=message):
        app.lambda_handler({"action": "delete"}, Context())  # a bad request: the settings come first
