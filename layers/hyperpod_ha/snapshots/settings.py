"""SnapshotStateFunction's settings, read once from the environment the template gives it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

from hyperpod_ha.environment import Environment, Settings, integer, optional, text
from hyperpod_ha.errors import ConfigurationError

# The template's defaults (BackupRetention, MinBackupIntervalMinutes).
DEFAULT_RETENTION = 7
DEFAULT_MIN_BACKUP_INTERVAL_MINUTES = 60


@dataclass(frozen=True)
class SnapshotSettings(Settings):
    file_system_id: str | None  # None: nothing to snapshot, every start is "unsupported"
    retention: int = DEFAULT_RETENTION
    export_paths: tuple[str, ...] = ()  # empty: the cluster's slurmctld state directory
    export_report_path: str | None = None
    cluster_name: str = ""  # the stack's cluster; "" only in settings made by hand
    min_backup_interval_minutes: int = DEFAULT_MIN_BACKUP_INTERVAL_MINUTES  # 0: one per verification
    stack_name: str | None = None  # tagged on every snapshot; IAM deletes only this stack's
    state_table: str | None = None  # where the last snapshot is recorded for `hyperpod-ha status`

    def __post_init__(self) -> None:
        if self.retention < 1:
            # Zero would delete the backup just made.
            raise ConfigurationError("BACKUP_RETENTION must be at least 1")
        if self.min_backup_interval_minutes < 0:
            raise ConfigurationError("MIN_BACKUP_INTERVAL_MINUTES must not be negative")

    @classmethod
    def read(cls, env: Environment) -> Self:
        paths = (path.strip().strip("/") for path in text(env, "EXPORT_PATHS", "").split(","))
        return cls(
            file_system_id=optional(env, "FILE_SYSTEM_ID"),
            retention=integer(env, "BACKUP_RETENTION", DEFAULT_RETENTION),
            export_paths=tuple(path for path in paths if path),
            export_report_path=optional(env, "EXPORT_REPORT_PATH"),
            cluster_name=text(env, "CLUSTER_NAME").strip(),
            min_backup_interval_minutes=integer(
                env, "MIN_BACKUP_INTERVAL_MINUTES", DEFAULT_MIN_BACKUP_INTERVAL_MINUTES
            ),
            stack_name=optional(env, "STACK_NAME"),
            state_table=optional(env, "STATE_TABLE"),
        )

    def paths_for(self, cluster: str) -> tuple[str, ...]:
        """Export paths, relative to the file system's mount point as FSx wants them."""
        return self.export_paths or (f"aws/hyperpod/{cluster}/var/spool/slurmctld",)
