"""What the snapshot tests share: the run they snapshot, FSx's descriptions, and answers to the
calls moto lacks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse
from moto import mock_aws

from hyperpod_ha.snapshots.models import StartRequest

REGION = "us-west-2"
ACCOUNT = "123456789012"  # moto's default account
EXECUTION = "arn:aws:states:us-west-2:123456789012:execution:FailoverVerification:ml-cluster-42"
FS = "fs-0123456789abcdef0"
STATE_PATH = "aws/hyperpod/ml-cluster/var/spool/slurmctld"
NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


def start_request(**changes: str) -> StartRequest:
    event = {
        "cluster": "ml-cluster",
        "reason": "failover verified",
        "verdict": "FAILED_OVER",
        "execution_id": EXECUTION,
    }
    event.update(changes)
    return StartRequest.from_event(event)


def lustre(deployment: str, **configuration: Any) -> dict[str, Any]:
    return {
        "FileSystemId": FS,
        "FileSystemType": "LUSTRE",
        "LustreConfiguration": {"DeploymentType": deployment, **configuration},
    }


def association(
    path: str = "/", repository: str = "s3://state-bucket/fsx", lifecycle: str = "AVAILABLE"
) -> dict[str, Any]:
    return {
        "AssociationId": "dra-0123456789abcdef0",
        "FileSystemPath": path,
        "DataRepositoryPath": repository,
        "Lifecycle": lifecycle,
    }


def described_backup(
    backup_id: str, age_hours: int, lifecycle: str = "AVAILABLE", fs: str | None = FS, **tags: str
) -> dict[str, Any]:
    """A DescribeBackups entry; tag keys are written with ``_`` for ``-``."""
    backup: dict[str, Any] = {
        "BackupId": backup_id,
        "Lifecycle": lifecycle,
        "CreationTime": NOW - timedelta(hours=age_hours),
        "Tags": [{"Key": key.replace("_", "-"), "Value": value} for key, value in tags.items()],
    }
    if fs:
        backup["FileSystem"] = {"FileSystemId": fs}
    return backup


def answer(client: Any, operation: str, response: dict[str, Any]) -> list[dict[str, Any]]:
    """Answer an FSx operation moto lacks with ``response``; botocore still validates the request."""
    requests: list[dict[str, Any]] = []

    def reply(params: dict[str, Any], **_: Any) -> tuple[AWSResponse, dict[str, Any]]:
        requests.append(json.loads(params["body"]))
        return AWSResponse("", 200, {}, None), response  # type: ignore[arg-type]

    client.meta.events.register(f"before-call.fsx.{operation}", reply)
    return requests


def moto_file_system(fsx: Any, deployment: str = "PERSISTENT_2") -> str:
    return str(
        fsx.create_file_system(
            FileSystemType="LUSTRE",
            StorageCapacity=1200,
            SubnetIds=["subnet-0123456789abcdef0"],
            LustreConfiguration={"DeploymentType": deployment, "PerUnitStorageThroughput": 125},
        )["FileSystem"]["FileSystemId"]
    )


@contextmanager
def moto_aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """moto's AWS, with test credentials in REGION."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    with mock_aws():
        yield
