"""One function per step of the restore state machine (``statemachine/redundancy_restore.asl.json``).

Each takes the step's JSON and returns the JSON the state machine keeps; the handler only picks
the step by ``action``. Waiting happens in the state machine, between steps.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import Any, Final

from hyperpod_ha.acting import steps as acting_steps
from hyperpod_ha.acting.execution_lease import HandedLease
from hyperpod_ha.commands import SESSION_MANAGER
from hyperpod_ha.controllers.maintenance import Maintenance
from hyperpod_ha.controllers.models import RUNNING, ClusterControllers, Controller, ControllerReport
from hyperpod_ha.controllers.targets import discovered_controller
from hyperpod_ha.request_fields import text_field
from hyperpod_ha.restore.context import RestoreContext, RestoreRequest, own_execution, request_of
from hyperpod_ha.restore.errors import InvalidRestoreRequest, RestoreCommandFailed, RestoreStepRefused
from hyperpod_ha.restore.guards import within_hourly_bound
from hyperpod_ha.restore.models import ClusterHolds, RestoreAction, RestorePlan
from hyperpod_ha.restore.node import restore_result
from hyperpod_ha.restore.planner import RestoreInput, plan_restore
from hyperpod_ha.restore.record import finish
from hyperpod_ha.restore.settings import HOUR, RestoreMode
from hyperpod_ha.runs.naming import execution_arn
from hyperpod_ha.verdict import reports_from_json

# The restore document is a Session document: Run Command would need a Command document.
SUPPORTED_TRANSPORTS: Final = frozenset({SESSION_MANAGER, "simulated", "lab-agent"})
MAX_CHECKS: Final = 30
MAX_ARN_CHARS: Final = 2048  # an execution ARN: Step Functions' bound is 2,048 characters
MAX_LEASE_ID_CHARS: Final = 64

_text = partial(text_field, rejected=InvalidRestoreRequest)


def begin(event: Mapping[str, Any], context: RestoreContext) -> dict[str, Any]:
    """Take the cluster's lease (kind ``restore``): one restore, run or drill at a time. A
    restore a verification run started before its snapshot takes that run's lease over, while
    the run holds it (the request's ``handed_from``: the lease's id and the run's execution, one
    of this stack's verification state machine)."""
    request = request_of(event, context)
    # Only a running restore of this stack takes the lease: a forged one would hold the cluster.
    execution_id = own_execution(event, context, "not restored: the lease is not taken: ")
    handed = handed_lease(event.get("request"), context.runs.settings.state_machine_arn)
    taken = context.lease.begin(request.cluster, execution_id, refused="not restored: ", handed=handed)
    return {**taken, "cluster": request.cluster} if taken["taken"] else taken


def handed_lease(request: object, verification_arn: str) -> HandedLease | None:
    """The run that hands its lease over, as the request names it; ``None`` when it names none."""
    handed = request.get("handed_from") if isinstance(request, Mapping) else None
    if handed is None:
        return None
    if not isinstance(handed, Mapping):
        raise InvalidRestoreRequest("handed_from is not an object")
    lease_id, execution = handed.get("lease_id"), handed.get("execution")
    if (
        not isinstance(lease_id, str)
        or not isinstance(execution, str)
        or len(execution) > MAX_ARN_CHARS
        or len(lease_id) > MAX_LEASE_ID_CHARS
    ):
        raise InvalidRestoreRequest("handed_from needs the run's lease_id and execution")
    run = execution.rsplit(":", 1)[-1]
    if execution != execution_arn(verification_arn, run):
        raise InvalidRestoreRequest("handed_from names no execution of this stack's verification runs")
    # A run without a lease (an operator's) hands nothing: the restore takes a free lease.
    return HandedLease(lease_id, run) if lease_id else None


def plan(event: Mapping[str, Any], context: RestoreContext) -> dict[str, Any]:
    """From one check of every controller: the actions, each counted against the hourly bound
    (only inside this stack's running restore: a forged plan would spend the hour's actions)."""
    request = request_of(event, context)
    own_execution(event, context, "not planned: ")
    cluster = event.get("cluster")
    if not isinstance(cluster, Mapping):
        raise InvalidRestoreRequest("plan needs the discovered cluster")
    reports = reports_from_json(event.get("reports"))
    nodes = _nodes(cluster.get("controllers"))
    if context.transport not in SUPPORTED_TRANSPORTS:
        why = f"not restored: the restore document is a Session document; the stack uses {context.transport}"
        return _with_nodes(RestorePlan(request.mode, "", None, blocked=why, reasons=(why,)), nodes)
    now = context.clock()
    hour = int(now) // HOUR
    holds = ClusterHolds(
        rollout=context.rollouts.in_progress(dt.datetime.fromtimestamp(now, dt.UTC)),
        silenced=context.items.silenced(),
    )
    unreached = any(not report.checked for report in reports)
    given = RestoreInput(
        request.mode,
        reports,
        context.document,
        maintenance=Maintenance.from_json(cluster.get("maintenance") or {"cluster_status": ""}),
        holds=holds,
        used_this_hour=context.items.actions_this_hour(hour),
        max_per_hour=context.settings.max_per_hour,
        cluster=context.cluster,
        now=now,
        unreachable_since=context.items.unreachable_since() if unreached else {},
        unreachable_seconds=context.settings.unreachable_seconds,
        cannot_reboot=context.settings.reboot_refused(
            cluster_id if isinstance(cluster_id := cluster.get("cluster_id"), str) else None
        )
        if context.reboots is not None
        else "this stack cannot reboot nodes",
    )
    planned = plan_restore(given)
    if request.dry_run and planned.actions:
        note = "dry run: nothing started; " + "; ".join(a.command for a in planned.actions)
        planned = replace(
            planned,
            actions=(),
            not_taken=planned.actions + planned.not_taken,
            reasons=(*planned.reasons, note),
        )
    return _with_nodes(_counted(planned, hour, context), nodes)


def _counted(planned: RestorePlan, hour: int, context: RestoreContext) -> RestorePlan:
    """Each action counted with a conditional write: two restores at once never pass the bound.
    A reboot is counted by the reboot step itself, when it reboots (:func:`reboot`)."""
    taken: list[RestoreAction] = []
    left: list[RestoreAction] = []
    bound = context.settings.max_per_hour
    for action in planned.actions:
        if not left and (action.kind == "reboot-node" or context.items.count_action(hour, bound) is not None):
            taken.append(action)
        else:
            left.append(action)
    if not left:
        return planned
    stopped = (
        f"restoring stopped: {bound} restore actions on this cluster this hour already "
        f"(RestoreMaxPerHour={bound}); a controller that fails again after each start needs a person"
    )
    return replace(
        planned,
        actions=tuple(taken),
        not_taken=tuple(left) + planned.not_taken,
        stopped=stopped,
        reasons=(*planned.reasons, stopped),
    )


def _nodes(value: object) -> dict[str, dict[str, Any]]:
    if not isinstance(value, list):
        raise InvalidRestoreRequest("the discovered cluster has no list of controllers")
    return {node.instance_id: node.to_json() for node in map(Controller.from_json, value[:32])}


def _with_nodes(planned: RestorePlan, nodes: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """The plan, each action with its node as discovery gave it (the probe's input)."""
    result = planned.to_json()
    result["actions"] = [{**a, "node": nodes.get(a["instance_id"])} for a in result["actions"]]
    result["act"] = bool(result["actions"]) and all(a["node"] for a in result["actions"])
    return result


def act(event: Mapping[str, Any], context: RestoreContext) -> dict[str, Any]:
    """Run the restore document on the action's controller: one this cluster's discovery finds
    now, with the target discovery made, and only for the restore that holds the cluster."""
    request = request_of(event, context)
    action = RestoreAction.from_json(event.get("item"))
    node = _own_controller(event, context, request.cluster, action)
    # Read again as it acts: a silence started since the plan holds this start too.
    if (silenced := context.items.silenced()) is not None:
        raise RestoreStepRefused(f"not restored: {action.controller}: {silenced}")
    try:
        output = context.commands().run(node.target, context.document)
    except RestoreCommandFailed as error:
        raise RestoreCommandFailed(f"{action.controller}: {error}") from error
    if output.rc != 0:
        detail = output.values.get("output") or f"exit code {output.rc}"
        raise RestoreCommandFailed(f"{action.controller}: slurmctld did not start: {detail}")
    return {**restore_result(output), "at": int(context.clock())}


def reboot(event: Mapping[str, Any], context: RestoreContext) -> dict[str, Any]:
    """BatchRebootClusterNodes for the action's one node (a ``reboot-node`` action only).

    Everything the plan decided is decided again here, from what this step reads itself (a
    direct invoke names any node): the restore that holds the cluster, a controller of this
    cluster discovered now and Running, the plan's guards on the run's reports with the
    maintenance, roll-out and unreachable record read now, and one more action in the hour."""
    request = request_of(event, context)
    action = RestoreAction.from_json(event.get("item"))
    if action.kind != "reboot-node" or context.reboots is None or context.settings.cannot_reboot:
        raise InvalidRestoreRequest("reboot takes a reboot-node action, on a stack that may reboot nodes")
    if request.mode is not RestoreMode.ALL or request.dry_run:
        raise RestoreStepRefused("not rebooted: only a restore with mode all, not a dry run, reboots a node")
    found = context.controllers()
    node = _own_controller(event, context, request.cluster, action, found)
    if node.status != RUNNING:
        raise RestoreStepRefused(
            f"not rebooted: {node.instance_id} is {node.status or 'of no status'}, not Running"
        )
    now = context.clock()
    why = _why_not_reboot(action, _own_reports(event, found), found, request, context, now)
    if why is not None:
        raise RestoreStepRefused(f"not rebooted: {action.controller} ({action.instance_id}): {why}")
    bound = context.settings.max_per_hour
    if context.items.count_action(int(now) // HOUR, bound) is None:
        raise RestoreStepRefused(within_hourly_bound(bound, bound) or "restoring stopped")
    answer = context.reboots.reboot(node.instance_id)
    now = int(now)
    # A node still unreachable after its reboot waits RestoreUnreachableMinutes again, not 0.
    context.items.restart_unreachable(action.instance_id, now)
    return {**answer, "at": now}


def _own_controller(
    event: Mapping[str, Any],
    context: RestoreContext,
    cluster: str,
    action: RestoreAction,
    found: ClusterControllers | None = None,
) -> Controller:
    """The action's node, only for the restore execution that holds the cluster's lease (no
    drill, run or other restore holds it meanwhile), as this cluster's discovery finds it now."""
    return context.lease.own_controller(
        cluster,
        _text(event, "execution_id"),
        found or context.controllers(),
        (action.instance_id, action.target),
        refused=RestoreStepRefused,
        what="not restored: ",
    )


def _own_reports(event: Mapping[str, Any], found: ClusterControllers) -> list[ControllerReport]:
    """The run's reports, each of a controller discovered now and with its target."""
    reports = reports_from_json(event.get("reports"))
    for report in reports:
        discovered_controller(found, report.instance_id, report.target or None, rejected=RestoreStepRefused)
    return reports


def _why_not_reboot(
    action: RestoreAction,
    reports: list[ControllerReport],
    found: ClusterControllers,
    request: RestoreRequest,
    context: RestoreContext,
    now: float,
) -> str | None:
    """The plan made again with what is read now: ``None`` when it reboots that node too."""
    given = RestoreInput(
        request.mode,
        reports,
        context.document,
        maintenance=found.maintenance,
        holds=ClusterHolds(
            rollout=context.rollouts.in_progress(dt.datetime.fromtimestamp(now, dt.UTC)),
            silenced=context.items.silenced(),
        ),
        max_per_hour=context.settings.max_per_hour,  # used_this_hour 0: the count comes after
        cluster=context.cluster,
        now=now,
        unreachable_since=context.items.unreachable_since(),
        unreachable_seconds=context.settings.unreachable_seconds,
        cannot_reboot=context.settings.reboot_refused(found.cluster_id),
    )
    planned = plan_restore(given)
    same = (action.kind, action.instance_id, action.index)
    if any((a.kind, a.instance_id, a.index) == same for a in planned.actions):
        return None
    if planned.active_controller == action.controller:
        return "it is the active controller"
    about = [r for r in planned.reasons if r.startswith(f"{action.controller}:")]
    return planned.blocked or (about[0] if about else "the plan made now does not reboot it")


def check(event: Mapping[str, Any], context: RestoreContext) -> dict[str, Any]:
    """Whether the restarted controller logged the role it should have and answers ping."""
    del context
    action = RestoreAction.from_json(event.get("item"))
    checks = event.get("checks", 0)
    most = event.get("max_checks", 6)
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in (checks, most)) or not (
        0 <= checks <= MAX_CHECKS and 1 <= most <= MAX_CHECKS
    ):
        raise InvalidRestoreRequest(f"checks and max_checks must be integers 0-{MAX_CHECKS}")
    report = ControllerReport.from_json(event.get("report"))
    # Only a rebooted node can be checked before the restore document ran on it.
    started = action.kind != "reboot-node" or bool(event.get("started"))
    done, what = judge(action, report, registered=bool(event.get("registered")), started=started)
    checks += 1
    waiting = "check-again" if checks < most else "not-restored"
    nxt = done if done in {"restored", "register", "start"} else waiting
    if nxt == "start":  # the checks after the reboot end here: the start gets its own
        checks = 0
    return {"next": nxt, "checks": checks, "what": what, "controller": action.controller}


def judge(
    action: RestoreAction, report: ControllerReport, *, registered: bool, started: bool = True
) -> tuple[str, str]:
    """``restored``, ``register`` (the primary took control back, slurmdbd names no controller),
    ``start`` (a rebooted node is reached, its slurmctld not started yet) or ``waiting``, with
    what was seen."""
    name = action.controller
    if not report.checked:
        return "waiting", f"{name} could not be checked ({report.reason or report.status.value})"
    if report.slurmctld.running is not True or report.slurmctld.stopped:
        return _not_running(name, started=started)
    # The configured primary rebooted after a failover takes control back when started.
    wanted = (
        "primary"
        if action.kind == "hand-back" or (action.kind, action.index) == ("reboot-node", 0)
        else "standby"
    )
    if report.role.logged != wanted:
        return "waiting", f"{name}: slurmctld logged {report.role.logged or 'no role'} so far, not {wanted}"
    answers = [line.responding for line in report.ping.lines if line.index == action.index]
    if answers != [True]:
        return "waiting", f"{name}: logged the {wanted} role but does not answer ping yet"
    if wanted == "primary" and report.dbd.reachable and not report.dbd.registered_host and not registered:
        return "register", f"{name} took control back; slurmdbd names no controller: registering it"
    return "restored", f"{name}: slurmctld runs, logged the {wanted} role and answers ping"


def _not_running(name: str, *, started: bool) -> tuple[str, str]:
    # Not started: only after a reboot (the restore document has not run on the node yet).
    if not started:
        return "start", f"{name}: reached after the reboot, slurmctld not running: starting it"
    return "waiting", f"{name}: slurmctld not running yet"


def verify(event: Mapping[str, Any], context: RestoreContext) -> dict[str, Any]:
    """After an action: a verification run, as any trigger starts one (it takes the lease);
    only from inside this stack's running restore, whose execution names the run."""
    request_of(event, context)
    execution_id = own_execution(event, context, "no verification started: ")
    started = context.runs.start(execution_id, "after restoring redundancy")
    return dict(started)


STEPS = acting_steps.by_action(begin, plan, reboot, act, check, finish, verify)


def run_step(event: object, context: RestoreContext) -> dict[str, Any]:
    return acting_steps.run_step(STEPS, event, context, InvalidRestoreRequest)
