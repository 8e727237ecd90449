"""Which controllers need slurmctld started, from one check of every controller: pure.

``standbys``: a controller other than the configured primary whose node is Running and was
reached through SSM (its probe ran) but whose slurmctld is not running, is stopped (SIGSTOP) or
does not answer ping gets ``start-slurmctld``. ``all``: also the configured primary after a
failover gets ``hand-back`` (started, it takes control back, as the drill's hand-back), and a
controller unreachable through SSM for ``RestoreUnreachableMinutes`` while its node is Running
(and its slurmctld answers no ping) gets ``reboot-node``. ``off`` (and ``standbys`` for what
only ``all`` does): nothing is taken, but every action that would restore redundancy is named
with its command.
The guards (:mod:`.guards`) block all actions, or one controller's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from hyperpod_ha.controllers.check import node_side_failure
from hyperpod_ha.controllers.maintenance import Maintenance
from hyperpod_ha.controllers.models import ControllerReport, ReportStatus
from hyperpod_ha.human_time import duration
from hyperpod_ha.restore import guards
from hyperpod_ha.restore.models import MAX_ACTIONS, ActionKind, ClusterHolds, RestoreAction, RestorePlan
from hyperpod_ha.restore.reboot import reboot_command
from hyperpod_ha.restore.settings import DEFAULT_UNREACHABLE_MINUTES, RestoreMode
from hyperpod_ha.verdict import MAX_REPORTS, VerdictPolicy, evaluate
from hyperpod_ha.verdict.activity import hung
from hyperpod_ha.verdict.crash_cause import config_crash
from hyperpod_ha.verdict.observation import Observation, ObservedController, observe


@dataclass(frozen=True)
class RestoreInput:
    mode: RestoreMode
    reports: Sequence[ControllerReport]
    document: str  # the stack's restore document, for the operator's command
    maintenance: Maintenance = field(default_factory=lambda: Maintenance(""))
    holds: ClusterHolds = field(default_factory=ClusterHolds)
    used_this_hour: int = 0
    max_per_hour: int = 2
    policy: VerdictPolicy = field(default_factory=VerdictPolicy)
    # The reboot of a node unreachable through SSM (``all``): since when each instance has been
    # unreachable (state_table.unreachable_since), now, and how long before a reboot.
    cluster: str = ""  # for the operator's reboot command
    now: float = 0.0
    unreachable_since: Mapping[str, int] = field(default_factory=dict)
    unreachable_seconds: int = DEFAULT_UNREACHABLE_MINUTES * 60
    cannot_reboot: str | None = None  # why this stack may not reboot a node (no grant), if it may not


def session_command(target: str, document: str) -> str:
    """What an operator runs for the same action (the document takes no parameter)."""
    return f"aws ssm start-session --target {target} --document-name {document}"


def plan_restore(given: RestoreInput) -> RestorePlan:
    reports = tuple(given.reports[:MAX_REPORTS])
    verdict = evaluate(reports, given.policy)
    seen = observe(reports, given.policy)
    base = RestorePlan(given.mode, verdict.name.value, verdict.active_controller)
    # Silenced first: the operator's window holds whatever the controllers show.
    blocked = guards.not_silenced(given.holds) or guards.verdict_allows(verdict.name.value)
    active, why_not_one = guards.one_active(seen) if blocked is None else (None, None)
    blocked = blocked or why_not_one
    if active is not None:
        blocked = (
            guards.state_save_writable(active)
            or guards.heartbeat_fresh(seen, active)
            or guards.not_under_maintenance(given.maintenance)
            or guards.no_hyperpod_node_operation(seen, given.maintenance)
            or guards.cluster_not_held(given.holds)
        )
    if blocked is not None or active is None:
        return replace(base, blocked=blocked, reasons=(blocked or "not restored",))
    wanted, notes = _wanted(seen, active, given)
    hand_back = guards.hand_back_known_bad(seen)
    hand_back = f"a hand-back walks into a known Slurm defect: {hand_back}" if hand_back else None
    operation = guards.hand_back_node_operation(seen)
    hand_back = hand_back or (f"{operation}: control is not moved meanwhile" if operation else None)
    return _bounded(base, wanted, notes, given, hand_back)


def _wanted(
    seen: Observation, active: ObservedController, given: RestoreInput
) -> tuple[list[RestoreAction], list[str]]:
    """Every controller that needs slurmctld started (the active one never), and why others not."""
    actions: list[RestoreAction] = []
    notes: list[str] = []
    for index in sorted(seen.controllers):
        other = seen.controllers[index]
        if other is active or other.report is None:
            continue
        need = _need(seen, other)
        if need is None:
            continue
        report = other.report
        reason = (
            guards.not_active(other, active)
            or guards.node_not_under_update(given.maintenance, report.instance_id)
            # The configured primary, started or rebooted, takes control back: a failover.
            or (guards.accounting_not_at_risk(active) if index == 0 else None)
        )
        crash = config_crash(other)
        if reason is None and crash is not None:
            reason = (
                f"not restored: its slurmctld died after {crash.file} changed ({crash.how}); "
                f"started again it dies the same way: fix {crash.file} first"
            )
        if reason is not None:
            notes.append(f"{other.key}: {reason}")
        elif not report.checked:
            reboot = _reboot(seen, other, active, given)
            if isinstance(reboot, RestoreAction):
                actions.append(reboot)
            else:
                notes.append(reboot)
        else:
            kind: ActionKind = "hand-back" if index == 0 else "start-slurmctld"
            target = report.target or report.instance_id
            actions.append(
                RestoreAction(
                    kind=kind,
                    controller=other.key,
                    index=index,
                    instance_id=report.instance_id,
                    target=target,
                    why=need,
                    command=session_command(target, given.document),
                )
            )
    return actions, notes


def _need(seen: Observation, other: ObservedController) -> str | None:
    """Why this controller's slurmctld needs a start, or ``None`` when it does not."""
    report = other.report
    assert report is not None
    if not report.checked:
        return None if report.status is ReportStatus.NOT_RUNNING else "could not be checked"
    if report.slurmctld.stopped:
        return "slurmctld stopped (SIGSTOP)"
    if hung(seen, other):
        return "slurmctld running but not answering ping"
    if report.slurmctld.running is not True:
        return "slurmctld not running"
    return None


def _reboot(
    seen: Observation, other: ObservedController, active: ObservedController, given: RestoreInput
) -> RestoreAction | str:
    """The reboot of a controller SSM has not reached for RestoreUnreachableMinutes while its node
    is Running (``reboot-node``), or why not (a note). A node whose slurmctld answers the active
    controller's ping is not rebooted: only SSM fails there, Slurm does not. Nor is one that only
    our side failed to reach (denied, a broken session): only a node-side failure counts.
    """
    report = other.report
    assert report is not None
    why = report.reason or report.status.value.lower().replace("_", " ")
    if report.status is not ReportStatus.UNREACHABLE or other.index is None:
        return f"{other.key}: could not be checked ({why}); not restored"
    unreached = f"not reachable through SSM ({why})"
    if not node_side_failure(report.reason):
        return f"{other.key}: {unreached}: a failure on this side, not the node's: not rebooted"
    if not _answers_no_ping(seen, active, other.index):
        return f"{other.key}: {unreached} but no check shows its slurmctld down: not rebooted"
    command = reboot_command(given.cluster, report.instance_id)
    since = given.unreachable_since.get(report.instance_id)
    minutes = given.unreachable_seconds // 60
    if since is None or given.now - since < given.unreachable_seconds:
        lasted = (
            " (since when: not recorded yet, the watchdog's ticks record it)"
            if since is None
            else f" for {duration(max(given.now - since, 0))}"
        )
        return (
            f"{other.key}: {unreached}{lasted}; its node is rebooted once it has lasted "
            f"RestoreUnreachableMinutes={minutes} (RestoreRedundancy=all): {command}"
        )
    return RestoreAction(
        kind="reboot-node",
        controller=other.key,
        index=other.index,
        instance_id=report.instance_id,
        target=report.target or report.instance_id,
        why=f"{unreached} for {duration(given.now - since)}, its node Running",
        command=command,
    )


def _answers_no_ping(seen: Observation, active: ObservedController, index: int) -> bool:
    """The active controller's ping shows this controller down, and no controller saw it up."""
    return (
        active.index is not None and seen.seen_by(active.index, index) is False and not seen.responding(index)
    )


def _bounded(
    base: RestorePlan,
    wanted: list[RestoreAction],
    notes: list[str],
    given: RestoreInput,
    hand_back_held: str | None = None,
) -> RestorePlan:
    """The mode and the hourly bound split the wanted actions into taken and not taken."""
    take: list[RestoreAction] = []
    leave: list[RestoreAction] = []
    reasons: list[str] = []
    stopped: str | None = None
    used = given.used_this_hour
    for action in wanted[:MAX_ACTIONS]:
        if given.mode is RestoreMode.OFF:
            leave.append(action)
            reasons.append(f"RestoreRedundancy is off: would {_what(action)}: {action.command}")
            continue
        if action.kind == "hand-back" and given.mode is not RestoreMode.ALL:
            leave.append(action)
            reasons.append(
                f"the configured primary {action.controller} is left as it is "
                f"(RestoreRedundancy={given.mode.value}; all would hand control back): {action.command}"
            )
            continue
        if action.kind == "hand-back" and hand_back_held is not None:
            leave.append(action)
            reasons.append(
                f"the configured primary {action.controller} is left as it is ({hand_back_held}): "
                f"{action.command}"
            )
            continue
        if action.kind == "reboot-node" and (given.mode is not RestoreMode.ALL or given.cannot_reboot):
            leave.append(action)
            held = (
                given.cannot_reboot
                if given.mode is RestoreMode.ALL
                else f"RestoreRedundancy={given.mode.value}; all would"
            )
            reasons.append(f"the node of {action.controller} is not rebooted ({held}): {action.command}")
            continue
        stopped = stopped or guards.within_hourly_bound(used, given.max_per_hour)
        if stopped is not None:
            leave.append(action)
            continue
        used += 1
        take.append(action)
        reasons.append(f"restoring: {_what(action)}")
    if stopped is not None:
        reasons.append(stopped)
    reasons += notes
    if not wanted and not notes:
        reasons.append("nothing to restore: every other controller's slurmctld runs")
    return replace(base, actions=tuple(take), not_taken=tuple(leave), stopped=stopped, reasons=tuple(reasons))


def _what(action: RestoreAction) -> str:
    if action.kind == "reboot-node":
        return f"reboot the node {action.instance_id} of {action.controller} ({action.why})"
    if action.kind == "hand-back":
        primary = f"the configured primary {action.controller}"
        return f"start slurmctld on {primary} ({action.why}): it takes control back"
    return f"start slurmctld on {action.controller} ({action.why})"
