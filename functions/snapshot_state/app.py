"""SnapshotStateFunction: start, poll and prune snapshots of the Slurm state on FSx.

``{"action": "start" | "describe" | "retain", ...}``; see ``hyperpod_ha.snapshots``.
``SnapshotBusy`` propagates so the workflow's Retry (matched on the error name) backs off.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from hyperpod_ha.observability import observed

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.snapshots.function import SnapshotStateFunction


@cache
def _function() -> SnapshotStateFunction:
    # On the first invocation, before its event: the feature's modules imported (INIT stays
    # small, see bench/cold_start.py), the settings read (a bad one fails every invocation,
    # naming it), the clients made.
    from hyperpod_ha.snapshots.function import SnapshotStateFunction, SnapshotStateFunctionSettings

    return SnapshotStateFunction.from_settings(SnapshotStateFunctionSettings.from_environment())


@observed
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _function().handle(event, context)
