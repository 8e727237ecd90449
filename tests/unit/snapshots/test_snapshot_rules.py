"""The pure rules of snapshots: request tokens and tags, what to copy, which backups to keep,
and which requests are refused."""

from __future__ import annotations

import re
from typing import Any

import pytest

from hyperpod_ha.snapshots.errors import InvalidSnapshotRequest
from hyperpod_ha.snapshots.models import DescribeRequest
from hyperpod_ha.snapshots.naming import client_request_token, snapshot_tags, tag_value
from hyperpod_ha.snapshots.plan import plan_snapshot
from hyperpod_ha.snapshots.retention import BackupScope, retention_plan
from tests.unit.snapshots.cases.snapshot_support import (
    EXECUTION,
    FS,
    STATE_PATH,
    association,
    described_backup,
    lustre,
    start_request,
)


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
    tags = {tag["Key"]: tag["Value"] for tag in snapshot_tags(start_request())}
    assert tags == {
        "created-by": "hyperpod-ha",
        "cluster": "ml-cluster",
        "execution": EXECUTION,
        "verdict": "FAILED_OVER",
        "reason": "failover verified",
    }
    assert "reason" not in {tag["Key"] for tag in snapshot_tags(start_request(reason=""))}


@pytest.mark.parametrize(
    ("file_system", "associations", "kind", "reason"),
    [
        (lustre("PERSISTENT_2"), [], "backup", "PERSISTENT_2 file system without a data repository link"),
        (lustre("PERSISTENT_1"), [], "backup", "PERSISTENT_1 file system without a data repository link"),
        (
            lustre("PERSISTENT_2"),
            [association()],
            "export",
            "linked to S3: exporting the Slurm state to S3",
        ),
        (lustre("SCRATCH_2"), [association("/aws")], "export", "deployment type SCRATCH_2: exporting"),
        (
            lustre(
                "SCRATCH_1",
                DataRepositoryConfiguration={"ExportPath": "s3://legacy/export", "Lifecycle": "AVAILABLE"},
            ),
            [],
            "export",
            "deployment type SCRATCH_1: exporting",
        ),
        (
            lustre("SCRATCH_2"),
            [],
            "unsupported",
            "cannot back it up (deployment type SCRATCH_2) and it has no",
        ),
        (
            lustre("PERSISTENT_2"),
            [association(lifecycle="CREATING")],
            "unsupported",
            "cannot back it up (linked to S3) and it has no available S3 data repository link",
        ),
        (
            lustre("PERSISTENT_2"),
            [association("/datasets")],
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
        association("/", "s3://root"),
        association("/aws/hyperpod", "s3://state"),
        association("/aw", "s3://no"),
    ]
    plan = plan_snapshot(lustre("PERSISTENT_2"), associations, [STATE_PATH])
    assert [target.repository_path for target in plan.targets] == ["s3://state"]


def test_retention_plan_only_ever_deletes_our_old_backups() -> None:
    ours = {"created_by": "hyperpod-ha", "cluster": "ml-cluster"}
    backups = [
        described_backup("backup-00000001", 1, **ours),
        described_backup("backup-00000002", 2, **ours),
        described_backup("backup-00000003", 3, **ours),
        described_backup("backup-00000004", 4, **ours),
        described_backup(
            "backup-00000005", 0, lifecycle="CREATING", **ours
        ),  # not AVAILABLE: never counted or deleted
        described_backup("backup-0000000a", 50),  # no tags: someone else's
        described_backup("backup-0000000b", 50, created_by="aws-backup", cluster="ml-cluster"),
        described_backup("backup-0000000c", 50, created_by="hyperpod-ha", cluster="other-cluster"),
        described_backup("backup-0000000d", 50, fs="fs-0fedcba987654321f", **ours),  # another file system
    ]
    kept, doomed = retention_plan(backups, BackupScope(FS, "ml-cluster"), keep=2)
    assert kept == ["backup-00000001", "backup-00000002"]
    assert doomed == ["backup-00000003", "backup-00000004"]


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
        start_request(**changes)
