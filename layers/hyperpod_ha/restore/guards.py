"""The guards: when nothing may be started, and on which controller not.

Each returns why it blocks (a sentence for the incident, the notice and the status view), or
``None`` when it lets the restore go on. Starting slurmctld is safe only while exactly one
controller serves with a state it can hand over: a standby started beside two active ones, or
beside one whose StateSaveLocation cannot be written, would join a cluster it cannot take over.
"""

from __future__ import annotations

from hyperpod_ha.controllers.maintenance import Maintenance, StatusKind, cluster_status_kind
from hyperpod_ha.restore.models import ClusterHolds
from hyperpod_ha.slurm import walking
from hyperpod_ha.verdict import DOWN, SPLIT_BRAIN, UNKNOWN
from hyperpod_ha.verdict.activity import active_controllers
from hyperpod_ha.verdict.observation import Observation, ObservedController

_NEVER = {
    SPLIT_BRAIN: "more than one controller acts as the active one: starting another would add to it",
    DOWN: "no controller is active: a started slurmctld would not find one to stand by",
    UNKNOWN: "no controller could be checked: nothing is known to restore safely",
}


def verdict_allows(verdict: str) -> str | None:
    """Never for SPLIT_BRAIN, DOWN, UNKNOWN."""
    why = _NEVER.get(verdict)  # type: ignore[call-overload]
    return None if why is None else f"not restored: the verdict is {verdict}: {why}"


def one_active(seen: Observation) -> tuple[ObservedController | None, str | None]:
    """The one active controller, or why there is not exactly one."""
    active = active_controllers(seen)
    if len(active) != 1:
        return None, f"not restored: {len(active)} controllers are active, not exactly one"
    return active[0], None


def state_save_writable(active: ObservedController) -> str | None:
    report = active.checked
    if report is None:
        return f"not restored: the active controller {active.key} could not be checked"
    if report.state_save.effectively_writable is not True:
        where = report.state_save.path or "StateSaveLocation"
        return f"not restored: {where} is not writable on the active controller {active.key}"
    return None


def heartbeat_fresh(seen: Observation, active: ObservedController) -> str | None:
    beat = seen.fresh_beat
    if beat is None or active.index is None or beat.writer != active.index:
        return (
            f"not restored: the active controller {active.key} wrote no fresh heartbeat "
            f"(within SlurmctldTimeout {seen.timeout} s and the slack)"
        )
    return None


def hand_back_known_bad(seen: Observation) -> str | None:
    """Why handing control back to the configured primary walks into a known defect of a
    release a controller runs (a takeover on 24.11.0-24.11.4: the backup fails on its second
    takeover, hyperpod_ha.slurm.advisories), or None."""
    for controller in seen.everyone:
        report = controller.checked
        version = report.failover.version if report is not None else None
        if (row := walking(version, "takeover")) is not None:
            fixed = ", ".join(row.fixed_in)
            return f"Slurm {version} on {controller.key}: {row.what} ({row.key}; fixed in {fixed})"
    return None


def no_hyperpod_node_operation(seen: Observation, maintenance: Maintenance) -> str | None:
    """HyperPod replacing or rebooting a controller's node (its Slurm reason ``Action:Replace``
    or ``Action:Reboot``), or a controller node in a deep health check: AWS's guidance is not to
    restart slurmctld or change node states while that runs."""
    names = _controller_names(seen)
    for action in _node_actions(seen):
        node = action.split(":", 1)[0]
        if node.lower() in names:
            return (
                f"not restored: HyperPod is acting on controller node {action} (Slurm reason); "
                "slurmctld is not restarted while a replacement or reboot runs"
            )
    checking = [n.instance_id for n in maintenance.controllers if n.status == "DeepHealthCheckInProgress"]
    if checking:
        return f"not restored: controller node {', '.join(checking)} is in DeepHealthCheckInProgress"
    return None


def hand_back_node_operation(seen: Observation) -> str | None:
    """Any node HyperPod is replacing or rebooting: a hand-back moves control (the active
    slurmctld steps down), which AWS's guidance says not to do while a replacement runs."""
    actions = _node_actions(seen)
    return f"HyperPod is acting on {', '.join(actions[:4])} (Slurm reasons)" if actions else None


def _node_actions(seen: Observation) -> list[str]:
    found: dict[str, None] = {}
    for report in seen.checked:
        found.update(dict.fromkeys(report.hyperpod.node_actions))
    return list(found)


def _controller_names(seen: Observation) -> set[str]:
    names = {c.key.lower() for c in seen.everyone}
    for report in seen.reports:
        for name in (report.hostname, report.node.hostname, report.node.controller_name):
            if name:
                names |= {name.lower(), name.split(".", 1)[0].lower()}
    return names


def not_under_maintenance(maintenance: Maintenance) -> str | None:
    """The cluster being updated: HyperPod stops and starts slurmctld itself."""
    if cluster_status_kind(maintenance.cluster_status) is StatusKind.UPDATING:
        return f"not restored: HyperPod is updating the cluster ({maintenance.describe()})"
    return None


def node_not_under_update(maintenance: Maintenance, instance_id: str) -> str | None:
    for node in maintenance.controllers:
        if node.instance_id == instance_id:
            return f"not restored: HyperPod is updating that node ({node.status})"
    return None


def cluster_not_held(holds: ClusterHolds) -> str | None:
    """A drill moves control on purpose; a roll-out restarts slurmdbd one controller at a time."""
    if holds.holder:
        return f"not restored: {holds.holder} holds the cluster"
    if holds.rollout:
        return f"not restored: {holds.rollout}"
    return None


def not_silenced(holds: ClusterHolds) -> str | None:
    """The operator's silence (``hyperpod-ha silence``): a maintenance window of their own, in
    which nothing is restored whatever the verdict."""
    return f"not restored: {holds.silenced}" if holds.silenced else None


def not_active(candidate: ObservedController, active: ObservedController) -> str | None:
    if candidate is active or (candidate.index is not None and candidate.index == active.index):
        return f"not restored: {candidate.key} is the active controller"
    return None


def within_hourly_bound(used: int, max_per_hour: int) -> str | None:
    if used >= max_per_hour:
        return (
            f"restoring stopped: {used} restore actions on this cluster this hour already "
            f"(RestoreMaxPerHour={max_per_hour}); a controller that fails again after each start "
            "needs a person: look at its slurmctld log"
        )
    return None


def accounting_not_at_risk(active: ObservedController) -> str | None:
    """A hand-back is a failover: the records slurmctld queues while slurmdbd (or its database) is
    away live in the active controller's memory, and the takeover loses them (issue 39's
    accounting-at-risk). Blocks starting the configured primary (or rebooting it), not a standby."""
    report = active.checked
    queue = report.dbd.agent_queue_size if report is not None else None
    if report is None or report.dbd.reachable is not False or not queue:
        return None
    return (
        f"not handed back: slurmdbd does not answer from the active controller {active.key} and "
        f"{queue} accounting records wait in its slurmctld's queue: a hand-back would lose them "
        "(accounting-at-risk); bring slurmdbd back first"
    )
