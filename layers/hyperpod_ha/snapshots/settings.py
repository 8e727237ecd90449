"""What the snapshots are taken and kept by (a part of SnapshotStateFunction's settings, read once
from the environment the template gives it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from hyperpod_ha.environment import Integer, OptionalText, Settings, Text, Variable
from hyperpod_ha.errors import ConfigurationError

# The template's defaults (BackupRetention, MinBackupIntervalMinutes).
DEFAULT_RETENTION = 7
DEFAULT_MIN_BACKUP_INTERVAL_MINUTES = 60


@dataclass(frozen=True)
class _ExportPaths(Variable[tuple[str, ...]]):
    """Comma-separated paths, relative to the file system's mount point as FSx wants them."""

    def parse(self, raw: str) -> tuple[str, ...]:
        paths = (path.strip().strip("/") for path in raw.split(","))
        return tuple(path for path in paths if path)


@dataclass(frozen=True)
class SnapshotSettings(Settings):
    """The file system, what is copied and how many backups are kept."""

    # None: nothing to snapshot, every start is "unsupported".
    file_system_id: Annotated[str | None, OptionalText("FILE_SYSTEM_ID")]
    retention: Annotated[int, Integer("BACKUP_RETENTION", DEFAULT_RETENTION)] = DEFAULT_RETENTION
    # Empty: the cluster's slurmctld state directory.
    export_paths: Annotated[tuple[str, ...], _ExportPaths("EXPORT_PATHS", "")] = ()
    export_report_path: Annotated[str | None, OptionalText("EXPORT_REPORT_PATH")] = None
    # The stack's cluster; "" only in settings made by hand.
    cluster_name: Annotated[str, Text("CLUSTER_NAME", strip=True)] = ""
    # 0: one per verification.
    min_backup_interval_minutes: Annotated[
        int, Integer("MIN_BACKUP_INTERVAL_MINUTES", DEFAULT_MIN_BACKUP_INTERVAL_MINUTES)
    ] = DEFAULT_MIN_BACKUP_INTERVAL_MINUTES
    # Tagged on every snapshot; IAM deletes only this stack's.
    stack_name: Annotated[str | None, OptionalText("STACK_NAME")] = None

    def __post_init__(self) -> None:
        if self.retention < 1:
            # Zero would delete the backup just made.
            raise ConfigurationError("BACKUP_RETENTION must be at least 1")
        if self.min_backup_interval_minutes < 0:
            raise ConfigurationError("MIN_BACKUP_INTERVAL_MINUTES must not be negative")

    def paths_for(self, cluster: str) -> tuple[str, ...]:
        """Export paths, relative to the file system's mount point as FSx wants them."""
        return self.export_paths or (f"aws/hyperpod/{cluster}/var/spool/slurmctld",)
