"""What SnapshotStateFunction is asked (start, describe) and what it answers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any, Literal

from hyperpod_ha.request_fields import bounded_id, is_cluster_name, text_field
from hyperpod_ha.snapshots.errors import InvalidSnapshotRequest

Kind = Literal["backup", "export", "unsupported"]
KINDS: tuple[Kind, ...] = ("backup", "export", "unsupported")

_text = partial(text_field, rejected=InvalidSnapshotRequest)


@dataclass(frozen=True)
class StartRequest:
    cluster: str
    reason: str
    verdict: str
    execution_id: str

    @classmethod
    def from_event(cls, event: Mapping[str, Any]) -> StartRequest:
        cluster = _text(event, "cluster")
        if not is_cluster_name(cluster):
            raise InvalidSnapshotRequest("cluster is not a HyperPod cluster name")
        return cls(
            cluster=cluster,
            reason=_text(event, "reason", required=False),
            verdict=_text(event, "verdict", required=False),
            execution_id=bounded_id(_text(event, "execution_id"), "execution_id", InvalidSnapshotRequest),
        )


@dataclass(frozen=True)
class DescribeRequest:
    kind: Kind
    id: str | None

    @classmethod
    def from_event(cls, event: Mapping[str, Any]) -> DescribeRequest:
        kind = event.get("kind")
        if kind not in KINDS:
            raise InvalidSnapshotRequest(f"kind must be one of {', '.join(KINDS)}")
        snapshot_id = _text(event, "id", required=kind != "unsupported") or None
        prefix = {"backup": "backup-", "export": "task-"}.get(str(kind))
        if prefix and not (snapshot_id or "").startswith(prefix):
            raise InvalidSnapshotRequest(f"id of a {kind} starts with {prefix!r}")
        return cls(kind=kind, id=snapshot_id)


@dataclass(frozen=True)
class Snapshot:
    """A snapshot just started (or found started by an earlier attempt)."""

    kind: Kind
    id: str | None
    status: str
    detail: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Retention:
    keep: int
    kept: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    # Backups we wanted to delete but FSx refused for now (in use), with the error code.
    skipped: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "keep": self.keep,
            "kept": list(self.kept),
            "deleted": list(self.deleted),
            "skipped": [{"id": backup, "reason": reason} for backup, reason in self.skipped],
        }


@dataclass(frozen=True)
class SnapshotState:
    """Where a snapshot stands when the workflow polls it."""

    kind: Kind
    id: str | None
    status: str
    done: bool
    succeeded: bool
    detail: str
    retention: Retention | None = None

    def to_json(self) -> dict[str, Any]:
        result = asdict(self)
        del result["retention"]  # present only when retention ran
        if self.retention is not None:
            result["retention"] = self.retention.to_json()
        return result
