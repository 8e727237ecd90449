"""One function per step of the drill state machine (``statemachine/failover_drill.asl.json``).

Each takes the step's JSON and returns the JSON the state machine keeps; the handler only
picks the step by ``action``. Waiting happens in the state machine, between steps.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from hyperpod_ha.acting import steps as acting_steps
from hyperpod_ha.acting.execution_lease import ExecutionLease
from hyperpod_ha.commands import SESSION_MANAGER
from hyperpod_ha.controllers.models import ClusterControllers
from hyperpod_ha.drill import rules
from hyperpod_ha.drill.models import ControllerRef, DrillRequest, DrillStepRefused, InvalidDrillRequest
from hyperpod_ha.drill.node import NodeOutput
from hyperpod_ha.drill.node_commands import DrillCommandFailed, NodeCommands
from hyperpod_ha.drill.records import DrillRecords
from hyperpod_ha.drill.report import build_report
from hyperpod_ha.drill.summary import summary
from hyperpod_ha.incidents import Incidents, OpenRequest
from hyperpod_ha.own_executions import OwnExecutions
from hyperpod_ha.request_fields import text_field
from hyperpod_ha.status_records import StatusRecords, controllers_record
from hyperpod_ha.topic_messages.sections import RunStart
from hyperpod_ha.trigger import Trigger
from hyperpod_ha.verdict import reports_from_json

KIND_DRILL_NOT_VERIFIED = "drill-not-verified"
# The drill documents are Session documents: Run Command would need a command document.
SUPPORTED_TRANSPORTS = frozenset({SESSION_MANAGER, "simulated", "lab-agent"})

MetricSink = Callable[[str, str, float], None]
_text = partial(text_field, rejected=InvalidDrillRequest)


@dataclass
class DrillContext:
    cluster: str  # the stack's: a request for another is refused
    # This cluster's controllers discovered now: a step that runs a command takes its node there.
    controllers: Callable[[], ClusterControllers]
    lease: ExecutionLease
    commands: Callable[[], NodeCommands]  # made on first use: most steps run no command
    records: DrillRecords
    status: StatusRecords
    incidents: Callable[[], Incidents]
    transport: str
    # This stack's drill state machine: the steps that act on their request's content without a
    # command's lease check (begin takes the lease, finish reports) run only inside its execution.
    executions: OwnExecutions
    metric: MetricSink = field(default=lambda name, unit, value: None)
    clock: Callable[[], float] = time.time


def request_of(event: Mapping[str, Any], context: DrillContext) -> DrillRequest:
    """The step's request, for the stack's own cluster only."""
    request = DrillRequest.from_json(event.get("request"))
    if request.cluster != context.cluster:
        raise InvalidDrillRequest("the request names another cluster than this stack's")
    return request


def _own_target(event: Mapping[str, Any], context: DrillContext, node: ControllerRef) -> str:
    """Where a command for ``node`` goes: only from the drill that holds the cluster's lease, and
    only to a controller this cluster's discovery finds now, at the target discovery made."""
    request = request_of(event, context)
    return context.lease.own_controller(
        request.cluster,
        _text(event, "execution_id"),
        context.controllers(),
        (node.instance_id, node.target),
        refused=DrillStepRefused,
        what="",
    ).target


def _own_execution(event: Mapping[str, Any], context: DrillContext, what: str) -> str:
    """The request's execution, when it is a running execution of this stack's drill state
    machine; :class:`DrillStepRefused` otherwise (a direct invoke naming any id), before anything."""
    execution_id = _text(event, "execution_id")
    context.executions.check(execution_id, DrillStepRefused, what)
    return execution_id


def begin(event: Mapping[str, Any], context: DrillContext) -> dict[str, Any]:
    """Take the cluster's lease (kind ``drill``), only for a running drill of this stack: a
    forged begin would hold the cluster, every trigger joining a drill that never runs."""
    request = request_of(event, context)
    execution_id = _own_execution(event, context, "the lease is not taken: ")
    return context.lease.begin(request.cluster, execution_id)


def plan(event: Mapping[str, Any], context: DrillContext) -> dict[str, Any]:
    request = request_of(event, context)
    if context.transport not in SUPPORTED_TRANSPORTS:
        return {"refused": f"drills need Session Manager documents; the stack uses {context.transport}"}
    verdict = event.get("verdict")
    if not isinstance(verdict, Mapping):
        raise InvalidDrillRequest("plan needs the verdict")
    return rules.plan_drill(request, verdict, reports_from_json(event.get("reports"))).to_json()


def jobs(event: Mapping[str, Any], context: DrillContext) -> dict[str, Any]:
    node = ControllerRef.from_json(event.get("node"))
    output = context.commands().jobs(_own_target(event, context, node), [])
    _require(output.rc == 0, f"squeue on {node.name} failed: {output.values.get('error', 'no detail')}")
    return {"running": rules.running_jobs(output), "known": len(output.jobs), "on": node.name}


def takeover(event: Mapping[str, Any], context: DrillContext) -> dict[str, Any]:
    """``phase`` takeover: the plan's backup takes control; hand-back: the primary takes it back.

    The command goes to that controller as this cluster's discovery finds it now, never to a
    target the request's text names."""
    request = request_of(event, context)
    name = event.get("phase")
    new_active = _new_active(name, event.get("plan"))
    target = _own_target(event, context, new_active)
    started = context.clock()
    # Index 0 on the primary hands control back (drill_node.sh).
    output = context.commands().takeover(target, new_active.index)
    detail = output.values.get("output") or output.values.get("error") or ""
    _require(output.rc == 0, f"{name} on {new_active.name} was refused (rc {output.rc}): {detail}")
    return rules.new_phase(str(name), new_active, started, request.max_checks)


def measure(event: Mapping[str, Any], context: DrillContext) -> dict[str, Any]:
    phase, verdict = event.get("phase"), event.get("verdict")
    if not isinstance(phase, Mapping) or not isinstance(verdict, Mapping):
        raise InvalidDrillRequest("measure needs the phase and the verdict")
    measured = rules.measure(phase, verdict, context.clock())
    # The controllers as this check saw them: the last check's make `hyperpod-ha status`'s table.
    measured["controllers"] = controllers_record(verdict.get("evidence"))
    return measured


def register(event: Mapping[str, Any], context: DrillContext) -> dict[str, Any]:
    """slurmdbd lost the new controller's registration: register it again, then check again.

    A failed attempt does not stop the drill: it is kept with the phase, whose checks go on."""
    phase = event.get("phase")
    if not isinstance(phase, Mapping):
        raise InvalidDrillRequest("register needs the phase")
    node = _new_active(phase.get("name"), event.get("plan"))
    target = _own_target(event, context, node)
    try:
        output = context.commands().register(target)
    except DrillCommandFailed as error:
        output = NodeOutput(rc=1, values={"error": str(error)})
    return rules.with_registration(phase, output, context.clock())


def check_jobs(event: Mapping[str, Any], context: DrillContext) -> dict[str, Any]:
    node = ControllerRef.from_json(event.get("node"))
    before = [str(job) for job in event.get("before") or []]
    output = context.commands().jobs(_own_target(event, context, node), before)
    _require(output.rc == 0, f"squeue on {node.name} failed: {output.values.get('error', 'no detail')}")
    return rules.judge_jobs(before, output)


def submit(event: Mapping[str, Any], context: DrillContext) -> dict[str, Any]:
    node = ControllerRef.from_json(event.get("node"))
    output = context.commands().submit(_own_target(event, context, node))
    job_id = output.values.get("submitted", "")
    if output.rc != 0 or not job_id.replace("_", "").isdigit():
        return {
            "id": None,
            "state": "NOT_SUBMITTED",
            "ran": False,
            "next": "done",
            "error": output.values.get("error", "sbatch gave no job id"),
        }
    return {
        "id": job_id,
        "submitted_at": context.clock(),
        "state": "PENDING",
        "ran": False,
        "checks": 0,
        "next": "check-again",
    }


def test_job(event: Mapping[str, Any], context: DrillContext) -> dict[str, Any]:
    node = ControllerRef.from_json(event.get("node"))
    job = event.get("test_job")
    if not isinstance(job, Mapping) or not job.get("id"):
        raise InvalidDrillRequest("test-job needs the submitted job")
    request = request_of(event, context)
    output = context.commands().jobs(_own_target(event, context, node), [str(job["id"])])
    followed = rules.follow_test_job(job, output, request.test_job_checks)
    if followed.get("ran"):
        followed["seconds"] = round(context.clock() - float(job["submitted_at"]), 2)
    return followed


def finish(event: Mapping[str, Any], context: DrillContext) -> dict[str, Any]:
    """The drill report: lease released, summary sent, OpsItem resolved (none for a dry run),
    incident if not verified.

    Only inside this stack's running drill execution: the report is made of the request's
    content, and a refused drill (no lease taken) reports too, so the lease cannot tell."""
    state = dict(event)
    request = request_of(state, context)
    execution_id = _own_execution(event, context, "nothing is reported or released: ")
    lease = state.get("lease") or {}
    if lease.get("taken") and lease.get("lease_id") != context.lease.lease_id(execution_id):
        # Only this drill's own lease is counted and released, never one a request names.
        raise DrillStepRefused("the lease named is not this drill's: nothing is reported or released")
    outcome, reasons, verified = rules.outcome_of(state)
    joined = 0
    if lease.get("taken"):
        joined = context.lease.joined(request.cluster, str(lease["lease_id"]))
    report = build_report(state, outcome, reasons, verified, joined, execution_id)
    if not verified:
        opened = context.incidents().open(
            OpenRequest(
                cluster=request.cluster,
                verdict=str(report["verdict"] or "UNKNOWN"),
                kind=KIND_DRILL_NOT_VERIFIED,
                execution_id=execution_id,
                reasons=tuple(reasons) or ("the drill left the cluster not verified",),
                # The controllers it moved control between, and what started it, for the message.
                evidence={c["name"]: c for c in (report["from_controller"], report["to_controller"]) if c},
                run_start=RunStart(Trigger("operator", execution_id), report["started_at"], "failover drill"),
            )
        )
        report["incident"] = opened.to_json()
    told = summary(report, context.records.region, context.clock(), stack_name=context.records.stack_name)
    report["notified"] = context.records.notify(told) is not None
    report["ops_item_id"] = None
    if not request.dry_run:
        # A dry run changed nothing: its report (status) and message are its record; an OpsItem
        # would be OpsCenter work for nobody. The title in the OpsItems' form, the body the message's.
        title = f"HyperPod cluster {request.cluster}: failover drill {outcome}"
        report["ops_item_id"] = context.records.record(
            request.cluster, execution_id, title, told.body, {"outcome": outcome, "report": _short(report)}
        )
    context.status.put(request.cluster, "drill", report)
    if report["verdict"]:
        context.status.put(
            request.cluster,
            "verdict",
            _verdict_record(report, state.get("hand_back") or state.get("takeover"), execution_id),
        )
    _emit(report, context.metric)
    if lease.get("taken"):
        # Last: a trigger arriving before this still joined the drill, whose verdict stands for it.
        report["lease_released"] = context.lease.release(request.cluster, str(lease["lease_id"]))
    return report


def _verdict_record(
    report: Mapping[str, Any], last: Mapping[str, Any] | None, execution_id: str
) -> dict[str, Any]:
    """The drill's last verdict for `hyperpod-ha status`, with the controllers its last check saw."""
    record: dict[str, Any] = {
        "verdict": report["verdict"],
        "reasons": report["verdict_reasons"],
        "execution_id": execution_id,
        "source": "drill",
    }
    controllers = (last or {}).get("controllers")
    if isinstance(controllers, list) and controllers:
        record["controllers"] = controllers
        active = [row.get("name") for row in controllers if isinstance(row, Mapping) and row.get("active")]
        record["active_controller"] = active[0] if len(active) == 1 else None
    return record


STEPS = acting_steps.by_action(
    begin, plan, jobs, takeover, measure, register, check_jobs, submit, test_job, finish
)


def run_step(event: object, context: DrillContext) -> dict[str, Any]:
    return acting_steps.run_step(STEPS, event, context, InvalidDrillRequest)


def _emit(report: Mapping[str, Any], metric: MetricSink) -> None:
    metric(f"Drills{str(report['outcome']).capitalize()}", "Count", 1)
    if report.get("takeover_seconds") is not None:
        metric("DrillTakeoverSeconds", "Seconds", float(report["takeover_seconds"]))
    if report.get("verified_seconds") is not None:
        metric("DrillVerifiedSeconds", "Seconds", float(report["verified_seconds"]))
    hand_back = report.get("hand_back") or {}
    if hand_back.get("verified_seconds") is not None:
        metric("DrillHandBackSeconds", "Seconds", float(hand_back["verified_seconds"]))


def _short(report: Mapping[str, Any]) -> str:
    import json

    keys = ("outcome", "takeover_seconds", "verified_seconds", "jobs_survived", "test_job", "hand_back")
    return json.dumps({key: report.get(key) for key in keys}, default=str)


def _new_active(phase: object, drill_plan: object) -> ControllerRef:
    """The controller a phase gives control to: the plan's backup, or the primary for the hand-back."""
    if phase not in ("takeover", "hand-back"):
        raise InvalidDrillRequest("phase must be takeover or hand-back")
    plan = drill_plan if isinstance(drill_plan, Mapping) else {}
    return ControllerRef.from_json(plan.get("target" if phase == "takeover" else "primary"))


def _require(condition: bool, reason: str) -> None:
    if not condition:
        raise DrillCommandFailed(reason)
