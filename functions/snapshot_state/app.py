"""SnapshotStateFunction: start, poll and prune snapshots of the Slurm state on FSx.

``{"action": "start" | "describe" | "retain", ...}``; see ``hyperpod_ha.snapshot``.
``SnapshotBusy`` propagates so the workflow's Retry (matched on the error name) backs off.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

import boto3
from aws_lambda_powertools.utilities.typing import LambdaContext

from hyperpod_ha.cluster import requested_cluster
from hyperpod_ha.observability import logger, tracer
from hyperpod_ha.settings import setting
from hyperpod_ha.snapshot import (
    DescribeRequest,
    InvalidSnapshotRequest,
    Snapshots,
    SnapshotSettings,
    StartRequest,
)
from hyperpod_ha.status_records import StatusRecords, from_environment

if TYPE_CHECKING:
    from mypy_boto3_fsx import FSxClient


@cache
def _fsx() -> FSxClient:
    return boto3.client("fsx")


@cache
def _snapshots() -> Snapshots:
    return Snapshots(_fsx(), SnapshotSettings.from_environment())


@cache
def _status() -> StatusRecords | None:
    return from_environment()


def _recorded(cluster: str, result: dict[str, Any], **more: Any) -> dict[str, Any]:
    """The snapshot, kept for `hyperpod-ha status`; the result unchanged."""
    records = _status()
    if records is not None:
        records.put(cluster, "snapshot", {**result, **more})
    return result


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if not isinstance(event, dict):
        raise InvalidSnapshotRequest("the request is not a JSON object")
    action = event.get("action")
    logger.append_keys(action=action)
    if action == "start":
        request = StartRequest.from_event(event)
        started = _snapshots().start(request).to_json()
        return _recorded(request.cluster, started, execution_id=event.get("execution_id"))
    if action == "describe":
        described = _snapshots().describe(DescribeRequest.from_event(event)).to_json()
        return _recorded(setting("CLUSTER_NAME"), described)
    if action == "retain":
        cluster = requested_cluster(event, setting("CLUSTER_NAME"))
        return {"retention": _snapshots().retain(cluster).to_json()}
    raise InvalidSnapshotRequest("action must be start, describe or retain")
