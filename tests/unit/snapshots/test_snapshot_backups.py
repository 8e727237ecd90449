"""Backups on moto's FSx: one per execution, polled until AVAILABLE, then only our old ones pruned.

moto keeps backups and tags but lacks DescribeDataRepositoryAssociations (answered here) and
ignores ClientRequestToken (checked on its backend instead).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto.fsx.models import fsx_backends

from hyperpod_ha.snapshots.lifecycle import Snapshots
from hyperpod_ha.snapshots.models import DescribeRequest
from hyperpod_ha.snapshots.naming import client_request_token, snapshot_tags
from hyperpod_ha.snapshots.settings import SnapshotSettings
from tests.unit.snapshots.cases.snapshot_support import (
    ACCOUNT,
    EXECUTION,
    NOW,
    REGION,
    answer,
    moto_aws,
    moto_file_system,
    start_request,
)


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with moto_aws(monkeypatch):
        yield


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
    fs = moto_file_system(fsx)
    associations = answer(fsx, "DescribeDataRepositoryAssociations", {"Associations": []})
    # A backup per verification: the interval is tested in test_snapshot_interval.
    snapshots = Snapshots(fsx, SnapshotSettings(fs, min_backup_interval_minutes=0))

    first = snapshots.start(start_request())
    assert (first.kind, first.status) == ("backup", "CREATING")
    assert first.id
    assert first.id.startswith("backup-")
    assert associations == [{"Filters": [{"Name": "file-system-id", "Values": [fs]}]}]
    assert _moto_backup(first.id).client_request_token == client_request_token("backup", EXECUTION)
    assert _all_backups(fsx)[first.id] == {tag["Key"]: tag["Value"] for tag in snapshot_tags(start_request())}

    # The workflow retries the task (its answer was lost): no second backup.
    again = snapshots.start(start_request())
    assert again.id == first.id
    assert list(_all_backups(fsx)) == [first.id]
    # Another execution does make a new one.
    other = snapshots.start(start_request(execution_id=EXECUTION + "-2"))
    assert other.id != first.id
    assert len(_all_backups(fsx)) == 2


def test_describe_polls_until_available_then_prunes_only_our_old_backups(aws: None) -> None:
    fsx = boto3.client("fsx")
    fs = moto_file_system(fsx)
    other_fs = moto_file_system(fsx)
    answer(fsx, "DescribeDataRepositoryAssociations", {"Associations": []})
    snapshots = Snapshots(fsx, SnapshotSettings(fs, retention=2, min_backup_interval_minutes=0))

    ours = [snapshots.start(start_request(execution_id=f"{EXECUTION}-{i}")).id for i in range(4)]
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
