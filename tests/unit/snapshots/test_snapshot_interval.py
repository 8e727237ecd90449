"""At most one backup per cluster per MinBackupIntervalMinutes (issue 16, item 9): a flood of
forged notifications cannot push the backups made before an incident out of retention."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from hyperpod_ha.errors import ConfigurationError
from hyperpod_ha.snapshots.lifecycle import Snapshots
from hyperpod_ha.snapshots.models import StartRequest
from hyperpod_ha.snapshots.retention import BackupScope, recent_backup
from hyperpod_ha.snapshots.settings import SnapshotSettings
from tests.unit.snapshots.cases.snapshot_support import EXECUTION, answer, moto_aws, moto_file_system

STACK = "hyperpod-ha"


@pytest.fixture
def fsx(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    with moto_aws(monkeypatch):
        client = boto3.client("fsx")
        answer(client, "DescribeDataRepositoryAssociations", {"Associations": []})
        yield client


class Clock:
    def __init__(self) -> None:
        self.offset = timedelta()

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset


def start(number: int) -> StartRequest:
    return StartRequest("ml-cluster", "forged?", "HEALTHY", f"{EXECUTION}-{number}")


def test_a_flood_inside_the_interval_makes_one_backup_and_evicts_nothing(fsx: Any) -> None:
    fs = moto_file_system(fsx)
    clock = Clock()
    settings = SnapshotSettings(fs, retention=7, min_backup_interval_minutes=60, stack_name=STACK)
    snapshots = Snapshots(fsx, settings, clock=clock)

    first = snapshots.start(start(0))
    flood = [snapshots.start(start(n)) for n in range(1, 30)]

    assert len(fsx.describe_backups()["Backups"]) == 1
    assert {snapshot.id for snapshot in flood} == {first.id}
    assert "at most one backup per 60 min" in flood[0].detail
    assert fsx.describe_backups()["Backups"][0]["Tags"][1] == {"Key": "stack", "Value": STACK}

    clock.offset = timedelta(minutes=61)  # the interval has passed: a new backup
    later = snapshots.start(start(99))
    assert later.id != first.id
    assert len(fsx.describe_backups()["Backups"]) == 2


def test_interval_zero_makes_a_backup_per_verification(fsx: Any) -> None:
    fs = moto_file_system(fsx)
    snapshots = Snapshots(fsx, SnapshotSettings(fs, min_backup_interval_minutes=0))
    ids = {snapshots.start(start(n)).id for n in range(3)}
    assert len(ids) == 3


def test_only_our_live_backups_count() -> None:
    now = datetime(2026, 11, 30, 12, tzinfo=UTC)

    def backup(backup_id: str, minutes_ago: int, lifecycle: str = "AVAILABLE", **tags: str) -> dict[str, Any]:
        tags = {"created-by": "hyperpod-ha", "stack": STACK, "cluster": "ml-cluster", **tags}
        return {
            "BackupId": backup_id,
            "Lifecycle": lifecycle,
            "CreationTime": now - timedelta(minutes=minutes_ago),
            "Tags": [{"Key": k, "Value": v} for k, v in tags.items()],
        }

    since = now - timedelta(minutes=60)
    backups = [
        backup("backup-old", 90),
        backup("backup-failed", 5, "FAILED"),
        backup("backup-other-cluster", 5, cluster="other"),
        backup("backup-other-stack", 5, stack="another-stack"),
        backup("backup-foreign", 5, **{"created-by": "someone"}),
    ]
    assert recent_backup(backups, BackupScope("fs-1", "ml-cluster", STACK), since) is None
    backups += [backup("backup-recent", 30), backup("backup-newest", 10, "CREATING")]
    found = recent_backup(backups, BackupScope("fs-1", "ml-cluster", STACK), since)
    assert found is not None
    assert found["BackupId"] == "backup-newest"


def test_a_negative_interval_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="MIN_BACKUP_INTERVAL_MINUTES"):
        SnapshotSettings("fs-1", min_backup_interval_minutes=-1)


def test_the_interval_comes_from_the_environment() -> None:
    env = {"CLUSTER_NAME": "ml-cluster", "MIN_BACKUP_INTERVAL_MINUTES": "15", "STACK_NAME": STACK}
    settings = SnapshotSettings.from_environment(env)
    assert (settings.min_backup_interval_minutes, settings.stack_name) == (15, STACK)
