"""What to copy: a backup, an export of the Slurm state to S3, or nothing, and why.

FSx backs up persistent file systems not linked to a data repository. A file system linked to
S3 (or a scratch one) can only export, and only the paths an available link covers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hyperpod_ha.snapshots.models import Kind

REPORT_SUFFIX = "/hyperpod-ha-reports"


@dataclass(frozen=True)
class ExportTarget:
    """Where an S3 data repository is linked: ``file_system_path`` on FSx, ``repository_path`` in S3."""

    file_system_path: str
    repository_path: str

    def covers(self, path: str) -> bool:
        linked = "/" + self.file_system_path.strip("/")
        wanted = "/" + path.strip("/")
        return linked in ("/", wanted) or wanted.startswith(linked + "/")


@dataclass(frozen=True)
class Plan:
    kind: Kind
    reason: str
    targets: tuple[ExportTarget, ...] = field(default_factory=tuple)

    def report_path(self, configured: str | None) -> str:
        """Where an export writes its report of failed files: configured, else beside the state."""
        return configured or self.targets[0].repository_path + REPORT_SUFFIX


def _legacy_link(lustre: Mapping[str, Any]) -> ExportTarget | None:
    config = lustre.get("DataRepositoryConfiguration") or {}
    path = config.get("ExportPath") or config.get("ImportPath")
    if isinstance(path, str) and path.startswith("s3://"):
        return ExportTarget("/", path.rstrip("/"))
    return None


def plan_snapshot(
    file_system: Mapping[str, Any], associations: Sequence[Mapping[str, Any]], paths: Sequence[str]
) -> Plan:
    """Backup, export or unsupported, from the file system's description and its associations."""
    fs_type = file_system.get("FileSystemType")
    if fs_type != "LUSTRE":
        return Plan("unsupported", f"file system type {fs_type} is not FSx for Lustre")
    lustre = file_system.get("LustreConfiguration") or {}
    deployment = str(lustre.get("DeploymentType") or "")
    legacy = _legacy_link(lustre)
    # Any association, even one still being created, makes FSx refuse a backup.
    linked = legacy is not None or any(a.get("Lifecycle") != "DELETING" for a in associations)
    if deployment.startswith("PERSISTENT") and not linked:
        return Plan("backup", f"{deployment} file system without a data repository link")
    why = (
        f"deployment type {deployment or 'unknown'}"
        if not deployment.startswith("PERSISTENT")
        else "linked to S3"
    )
    targets = [
        ExportTarget(str(a.get("FileSystemPath") or "/"), str(a["DataRepositoryPath"]).rstrip("/"))
        for a in associations
        if a.get("Lifecycle") == "AVAILABLE" and str(a.get("DataRepositoryPath", "")).startswith("s3://")
    ]
    if (
        legacy is not None
        and (lustre.get("DataRepositoryConfiguration") or {}).get("Lifecycle", "AVAILABLE") == "AVAILABLE"
    ):
        targets.append(legacy)
    if not targets:
        return Plan(
            "unsupported", f"FSx cannot back it up ({why}) and it has no available S3 data repository link"
        )
    chosen: list[ExportTarget] = []
    for path in paths:
        covering = sorted(
            (t for t in targets if t.covers(path)), key=lambda t: len(t.file_system_path), reverse=True
        )
        if not covering:
            return Plan(
                "unsupported", f"FSx cannot back it up ({why}) and no S3 data repository link covers {path}"
            )
        chosen.append(covering[0])
    return Plan("export", f"{why}: exporting the Slurm state to S3", tuple(chosen))
