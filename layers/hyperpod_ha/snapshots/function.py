"""SnapshotStateFunction and its settings: three actions (``start``, ``describe``, ``retain``),
each result kept as the cluster's last snapshot for ``hyperpod-ha status``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from hyperpod_ha.controllers.naming import requested_cluster
from hyperpod_ha.environment import OptionalText, Settings
from hyperpod_ha.observability import logger
from hyperpod_ha.snapshots.errors import InvalidSnapshotRequest
from hyperpod_ha.snapshots.lifecycle import Snapshots
from hyperpod_ha.snapshots.models import DescribeRequest, StartRequest
from hyperpod_ha.snapshots.settings import SnapshotSettings
from hyperpod_ha.status_records import StatusRecords

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext


@dataclass(frozen=True)
class SnapshotStateFunctionSettings(Settings):
    """SnapshotStateFunction's environment."""

    snapshots: SnapshotSettings
    # Where the last snapshot is recorded for `hyperpod-ha status`; not recorded without it.
    state_table: Annotated[str | None, OptionalText("STATE_TABLE")] = None


class SnapshotStateFunction:
    def __init__(self, snapshots: Snapshots, records: StatusRecords | None) -> None:
        self.snapshots = snapshots
        self._records = records

    @classmethod
    def from_settings(cls, settings: SnapshotStateFunctionSettings) -> SnapshotStateFunction:
        import boto3

        table = settings.state_table
        records = StatusRecords(boto3.client("dynamodb"), table) if table else None
        return cls(Snapshots(boto3.client("fsx"), settings.snapshots), records)

    def handle(self, event: object, context: LambdaContext) -> dict[str, Any]:
        if not isinstance(event, dict):
            raise InvalidSnapshotRequest("the request is not a JSON object")
        action = event.get("action")
        logger.append_keys(action=action)
        cluster = self.snapshots.settings.cluster_name
        if action == "start":
            request = StartRequest.from_event(event)
            if cluster and request.cluster != cluster:
                # One stack, one cluster: never a backup of our file system tagged for another.
                raise InvalidSnapshotRequest(f"this stack watches cluster {cluster}, not {request.cluster}")
            started = self.snapshots.start(request).to_json()
            return self._recorded(request.cluster, started, execution_id=event.get("execution_id"))
        if action == "describe":
            return self._recorded(
                cluster, self.snapshots.describe(DescribeRequest.from_event(event)).to_json()
            )
        if action == "retain":
            return {"retention": self.snapshots.retain(requested_cluster(event, cluster)).to_json()}
        raise InvalidSnapshotRequest("action must be start, describe or retain")

    def _recorded(self, cluster: str, result: dict[str, Any], **more: Any) -> dict[str, Any]:
        """The result unchanged, kept as the cluster's last snapshot."""
        if self._records is not None:
            self._records.put(cluster, "snapshot", {**result, **more})
        return result
