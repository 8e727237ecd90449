"""SnapshotStateFunction: start, poll and prune snapshots of the Slurm state on FSx.

``{"action": "start" | "describe" | "retain", ...}``; see ``hyperpod_ha.snapshots``.
``SnapshotBusy`` propagates so the workflow's Retry (matched on the error name) backs off.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import boto3
from aws_lambda_powertools.utilities.typing import LambdaContext

from hyperpod_ha.observability import observed
from hyperpod_ha.snapshots.actions import SnapshotActions
from hyperpod_ha.snapshots.service import Snapshots
from hyperpod_ha.snapshots.settings import SnapshotSettings
from hyperpod_ha.status_records import StatusRecords


@cache
def _actions() -> SnapshotActions:
    """Read and checked once per container, before the first event is handled."""
    settings = SnapshotSettings.from_environment()
    table = settings.state_table
    records = StatusRecords(boto3.client("dynamodb"), table) if table else None
    return SnapshotActions(Snapshots(boto3.client("fsx"), settings), records)


@observed
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _actions().handle(event)
