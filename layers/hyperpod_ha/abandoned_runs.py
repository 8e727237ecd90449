"""A verification run that ended without finishing its own workflow: stopped by hand
(ABORTED) or out of time (TIMED_OUT). Its Catch states never ran, so nobody released the
cluster's lease or told anyone: this does both, from Step Functions' status-change event."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

ABANDONED_STATUSES = frozenset({"ABORTED", "TIMED_OUT"})


class AbandonedRunRejected(ValueError):
    """Not a status-change event of an abandoned verification run. Safe to log."""


@dataclass(frozen=True)
class AbandonedRun:
    execution_arn: str
    status: str
    cluster: str
    lease_id: str
    reason: str


def parse_abandoned_run(event: Mapping[str, Any]) -> AbandonedRun:
    detail = event.get("detail") if isinstance(event, Mapping) else None
    if not isinstance(detail, Mapping) or event.get("source") != "aws.states":
        raise AbandonedRunRejected("not a Step Functions execution status change")
    status = detail.get("status")
    if status not in ABANDONED_STATUSES:
        raise AbandonedRunRejected(f"status {str(status)[:20]!r} is not ABORTED or TIMED_OUT")
    execution_arn = detail.get("executionArn")
    if not isinstance(execution_arn, str) or not execution_arn:
        raise AbandonedRunRejected("executionArn is missing")
    try:
        run_input = json.loads(detail.get("input") or "")
    except (TypeError, json.JSONDecodeError):
        raise AbandonedRunRejected("the run's input is not JSON") from None
    if not isinstance(run_input, Mapping) or not isinstance(run_input.get("cluster"), str):
        raise AbandonedRunRejected("the run's input names no cluster")
    return AbandonedRun(
        execution_arn=execution_arn,
        status=str(status),
        cluster=run_input["cluster"],
        lease_id=str(run_input.get("lease_id") or ""),
        reason=str(run_input.get("reason") or ""),
    )
