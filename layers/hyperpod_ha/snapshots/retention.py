"""Which backups to keep: the newest N of ours, and at most one new backup per interval.

Retention keeps the newest N AVAILABLE backups this project made for the cluster and file
system and never touches any other backup. A start inside ``MIN_BACKUP_INTERVAL_MINUTES`` of
our last backup reuses it, so a flood of forged notifications cannot push the backups made
before an incident out of retention.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from hyperpod_ha.snapshots.models import Snapshot
from hyperpod_ha.snapshots.naming import is_ours

# Deleting these is refused while the backup is in use; retention tries again next time.
RETENTION_BUSY = frozenset({"BackupInProgress", "BackupRestoring", "BackupBeingCopied"})


def created(backup: Mapping[str, Any]) -> datetime:
    when = backup.get("CreationTime")
    if isinstance(when, datetime):
        return when if when.tzinfo else when.replace(tzinfo=UTC)
    return datetime.min.replace(tzinfo=UTC)


@dataclass(frozen=True)
class BackupScope:
    """The backups retention and reuse may look at: this project's (this stack's, when named)
    for one cluster and file system."""

    file_system_id: str
    cluster: str
    stack: str | None = None

    def includes(self, backup: Mapping[str, Any]) -> bool:
        return is_ours(backup, self.file_system_id, self.cluster, self.stack)


def retention_plan(
    backups: Sequence[Mapping[str, Any]], scope: BackupScope, keep: int
) -> tuple[list[str], list[str]]:
    """(kept, to delete): of our AVAILABLE backups, the newest ``keep`` stay."""
    ours = [b for b in backups if b.get("Lifecycle") == "AVAILABLE" and scope.includes(b)]
    ours.sort(key=created, reverse=True)
    return [str(b["BackupId"]) for b in ours[:keep]], [str(b["BackupId"]) for b in ours[keep:]]


def recent_backup(
    backups: Sequence[Mapping[str, Any]], scope: BackupScope, since: datetime
) -> Mapping[str, Any] | None:
    """Our newest backup of the cluster made at or after ``since`` that is not failed or gone."""
    recent = [
        b
        for b in backups
        if b.get("Lifecycle") not in ("FAILED", "DELETED") and scope.includes(b) and created(b) >= since
    ]
    return max(recent, key=created, default=None)


def reused_backup(
    backups: Sequence[Mapping[str, Any]], scope: BackupScope, now: datetime, interval_minutes: int
) -> Snapshot | None:
    """The backup a start inside the interval reports instead of making one (none for interval 0)."""
    if not interval_minutes:
        return None
    recent = recent_backup(backups, scope, now - timedelta(minutes=interval_minutes))
    if recent is None:
        return None
    minutes = int((now - created(recent)).total_seconds() // 60)
    return Snapshot(
        "backup",
        str(recent["BackupId"]),
        str(recent.get("Lifecycle")),
        f"reused backup {recent['BackupId']} made {minutes} min ago: at most one backup "
        f"per {interval_minutes} min (MinBackupIntervalMinutes)",
    )
