"""A verification run, drill or restore of redundancy that ended without finishing its own
workflow: stopped by hand (ABORTED), out of time (TIMED_OUT), or FAILED from an error no Catch
handled. Its clean-up never ran, so nobody released the cluster's lease (or, for a run or a
drill, told anyone): this does it, from Step Functions' status-change event.

A run that fails with a verdict (DOWN, SPLIT_BRAIN, ...) released its lease and opened its
incident itself: its FAILED event finds the lease gone and is left alone. So does a restore
whose failed step was caught (it releases the cluster before it fails)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from hyperpod_ha.errors import InputRejected
from hyperpod_ha.human_time import iso_utc
from hyperpod_ha.json_input import load_json
from hyperpod_ha.request_fields import MAX_ID_CHARS, bounded_text
from hyperpod_ha.topic_messages.sections import RunStart, on_call_command

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
    # How the run began (its input's trigger, its start), for the incident's message.
    run_start: RunStart | None = None


# Step Functions' execution input is at most 256 KiB; a run's own is far smaller.
MAX_INPUT_CHARS = 256 * 1024


def parse_abandoned_run(
    event: Mapping[str, Any], state_machines: Collection[str], cluster: str
) -> AbandonedRun:
    """The abandoned run of one of this stack's ``state_machines`` (their ARNs) for ``cluster``;
    :class:`AbandonedRunRejected` for anything else, before any lease or incident is touched."""
    detail = event.get("detail") if isinstance(event, Mapping) else None
    if not isinstance(detail, Mapping) or event.get("source") != "aws.states":
        raise AbandonedRunRejected("not a Step Functions execution status change")
    status = detail.get("status")
    if status not in ABANDONED_STATUSES:
        raise AbandonedRunRejected(f"status {str(status)[:20]!r} is not ABORTED, TIMED_OUT or FAILED")
    execution_arn = detail.get("executionArn")
    if not isinstance(execution_arn, str) or not execution_arn:
        raise AbandonedRunRejected("executionArn is missing")
    machine = detail.get("stateMachineArn")
    if machine not in {arn for arn in state_machines if arn}:
        raise AbandonedRunRejected("stateMachineArn is not one of this stack's state machines")
    if len(execution_arn) > MAX_ID_CHARS or not execution_arn.startswith(execution_prefix(str(machine))):
        raise AbandonedRunRejected("executionArn is not an execution of that state machine")
    raw_input = detail.get("input") or ""
    if not isinstance(raw_input, str) or len(raw_input) > MAX_INPUT_CHARS:
        raise AbandonedRunRejected("the run's input is not JSON text of a run")
    run_input = load_json(raw_input, AbandonedRunRejected, what="the run's input")
    if not isinstance(run_input, Mapping) or not isinstance(run_input.get("cluster"), str):
        raise AbandonedRunRejected("the run's input names no cluster")
    if run_input["cluster"] != cluster:
        raise AbandonedRunRejected("the run's input names another cluster than this stack's")
    for name in ("lease_id", "reason"):
        if not isinstance(run_input.get(name) or "", str):
            raise AbandonedRunRejected(f"the run's {name} is not a string")
    lease_id = run_input.get("lease_id") or ""
    if len(lease_id) > MAX_ID_CHARS:
        raise AbandonedRunRejected("the run's lease_id is not an id")
    reason = bounded_text(run_input.get("reason") or "")
    start = detail.get("startDate")  # epoch milliseconds
    started_at = iso_utc(start / 1000) if isinstance(start, int) and 0 < start < 10**14 else None
    return AbandonedRun(
        execution_arn=execution_arn,
        status=str(status),
        cluster=cluster,
        lease_id=lease_id,
        reason=reason,
        run_start=RunStart.from_json(run_input.get("trigger") or {"source": "operator"}, started_at, reason),
    )


def execution_prefix(state_machine_arn: str) -> str:
    """What the ARN of every execution of ``state_machine_arn`` starts with."""
    return state_machine_arn.replace(":stateMachine:", ":execution:", 1) + ":"


def needs_release_check(run: AbandonedRun) -> bool:
    """True when the run is handled only if its lease is still held (it may have cleaned up)."""
    return run.status == FAILED


def is_drill(run: AbandonedRun, drill_state_machine_arn: str) -> bool:
    """Whether the run is an execution of the drill state machine (its ARN's prefix)."""
    return is_execution_of(run, drill_state_machine_arn)


def is_execution_of(run: AbandonedRun, state_machine_arn: str) -> bool:
    """Whether the run is an execution of ``state_machine_arn`` (its ARN's prefix)."""
    machine = state_machine_arn.strip()
    return bool(machine) and run.execution_arn.startswith(execution_prefix(machine))


def incident_reasons(
    run: AbandonedRun, *, drill: bool, region: str, stack_name: str | None
) -> tuple[str, tuple[str, ...]]:
    """The incident's kind and reasons for an abandoned run or drill (the command to verify it
    again complete: this stack and region)."""
    if drill:
        runbook = on_call_command("runbook start", run.cluster, region, stack_name, "--follow")
        return "drill-not-verified", (
            f"the failover drill was {run.status} before it finished: the cluster may be left failed over",
            f"run `{runbook}` to verify it, and hand control back if needed",
        )
    return "verification-error", (
        f"the verification run was {run.status} before it finished: nothing was verified",
        f"it had started for: {run.reason or 'no reason given'}",
    )
