"""A verification run that ended without finishing its own workflow: stopped by hand
(ABORTED), out of time (TIMED_OUT), or FAILED from an error no Catch handled. Its clean-up
never ran, so nobody released the cluster's lease or told anyone: this does both, from Step
Functions' status-change event.

A run that fails with a verdict (DOWN, SPLIT_BRAIN, ...) released its lease and opened its
incident itself: its FAILED event finds the lease gone and is left alone."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hyperpod_ha.errors import InputRejected
from hyperpod_ha.json_input import load_json

ABANDONED_STATUSES = frozenset({"ABORTED", "TIMED_OUT", "FAILED"})
# Only a FAILED run may have cleaned up after itself: it is handled only while its lease is held.
FAILED = "FAILED"


class AbandonedRunRejected(InputRejected):
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
        raise AbandonedRunRejected(f"status {str(status)[:20]!r} is not ABORTED, TIMED_OUT or FAILED")
    execution_arn = detail.get("executionArn")
    if not isinstance(execution_arn, str) or not execution_arn:
        raise AbandonedRunRejected("executionArn is missing")
    run_input = load_json(detail.get("input") or "", AbandonedRunRejected, what="the run's input")
    if not isinstance(run_input, Mapping) or not isinstance(run_input.get("cluster"), str):
        raise AbandonedRunRejected("the run's input names no cluster")
    for name in ("lease_id", "reason"):
        if not isinstance(run_input.get(name) or "", str):
            raise AbandonedRunRejected(f"the run's {name} is not a string")
    return AbandonedRun(
        execution_arn=execution_arn,
        status=str(status),
        cluster=run_input["cluster"],
        lease_id=run_input.get("lease_id") or "",
        reason=run_input.get("reason") or "",
    )


def needs_release_check(run: AbandonedRun) -> bool:
    """True when the run is handled only if its lease is still held (it may have cleaned up)."""
    return run.status == FAILED


def is_drill(run: AbandonedRun, drill_state_machine_arn: str) -> bool:
    """Whether the run is an execution of the drill state machine (its ARN's prefix)."""
    drills = drill_state_machine_arn.strip()
    return bool(drills) and run.execution_arn.startswith(
        drills.replace(":stateMachine:", ":execution:") + ":"
    )


def incident_reasons(run: AbandonedRun, *, drill: bool) -> tuple[str, tuple[str, ...]]:
    """The incident's kind and reasons for an abandoned run or drill."""
    if drill:
        return "drill-not-verified", (
            f"the failover drill was {run.status} before it finished: the cluster may be left failed over",
            "run `hyperpod-ha runbook start` to verify it, and hand control back if needed",
        )
    return "verification-error", (
        f"the verification run was {run.status} before it finished: nothing was verified",
        f"it had started for: {run.reason or 'no reason given'}",
    )
