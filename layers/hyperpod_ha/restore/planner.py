"""Which controllers need slurmctld started, from one check of every controller: pure.

``standbys``: a controller other than the configured primary whose node is Running and was
reached through SSM (its probe ran) but whose slurmctld is not running, is stopped (SIGSTOP) or
does not answer ping gets ``start-slurmctld``. ``all``: also the configured primary after a
failover gets ``hand-back`` (started, it takes control back, as the drill's hand-back). ``off``:
nothing is taken, but every action that would restore redundancy is named with its command.
The guards (:mod:`.guards`) block all actions, or one controller's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from hyperpod_ha.controllers.maintenance import Maintenance
from hyperpod_ha.controllers.models import ControllerReport, ReportStatus
from hyperpod_ha.restore import guards
from hyperpod_ha.restore.models import MAX_ACTIONS, ActionKind, ClusterHolds, RestoreAction, RestorePlan
from hyperpod_ha.restore.settings import RestoreMode
from hyperpod_ha.verdict import MAX_REPORTS, VerdictPolicy, evaluate
from hyperpod_ha.verdict.activity import hung
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


def session_command(target: str, document: str) -> str:
    """What an operator runs for the same action (the document takes no parameter)."""
    return f"aws ssm start-session --target {target} --document-name {document}"


def plan_restore(given: RestoreInput) -> RestorePlan:
    reports = tuple(given.reports[:MAX_REPORTS])
    verdict = evaluate(reports, given.policy)
    seen = observe(reports, given.policy)
    base = RestorePlan(given.mode, verdict.name.value, verdict.active_controller)
    blocked = guards.verdict_allows(verdict.name.value)
    active, why_not_one = guards.one_active(seen) if blocked is None else (None, None)
    blocked = blocked or why_not_one
    if active is not None:
        blocked = (
            guards.state_save_writable(active)
            or guards.heartbeat_fresh(seen, active)
            or guards.not_under_maintenance(given.maintenance)
            or guards.cluster_not_held(given.holds)
        )
    if blocked is not None or active is None:
        return replace(base, blocked=blocked, reasons=(blocked or "not restored",))
    wanted, notes = _wanted(seen, active, given)
    return _bounded(base, wanted, notes, given)


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
        reason = guards.not_active(other, active) or guards.node_not_under_update(
            given.maintenance, report.instance_id
        )
        if reason is not None:
            notes.append(f"{other.key}: {reason}")
        elif not report.checked:
            notes.append(f"{other.key}: {need}; not restored: {_unreached(report)}")
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


def _unreached(report: ControllerReport) -> str:
    why = report.reason or report.status.value.lower().replace("_", " ")
    return f"not reachable through SSM ({why}): a reboot of the node is not built (docs/limitations.md)"


def _bounded(
    base: RestorePlan, wanted: list[RestoreAction], notes: list[str], given: RestoreInput
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
    if action.kind == "hand-back":
        primary = f"the configured primary {action.controller}"
        return f"start slurmctld on {primary} ({action.why}): it takes control back"
    return f"start slurmctld on {action.controller} ({action.why})"
