"""A verified tick that starts a verification run so that the restore follows (``RestoreRedundancy``).

A standby that dies on a serving cluster leaves the verdict verified (HEALTHY or FAILED_OVER,
redundancy ``reduced`` or ``none``): nothing failed over, so no trigger starts a run, and only a
run's verdict starts a restore ("Restore redundancy?"). With ``RestoreRedundancy`` other than
``off``, a tick whose verdict is verified with a standby not ready starts (or joins) a run
through the cluster's lease as every trigger does, and that run's verdict starts the restore as
today. Bounded: only when the restore's own planner (:func:`~hyperpod_ha.restore.planner.plan_restore`,
pure: its guards, the mode, the actions counted this hour against ``RestoreMaxPerHour``) would take
an action now, so no run every tick when nothing can be done (the budget spent, a guard blocks,
``standbys`` with only the configured primary down, a drill or a restore holding the cluster,
the operator's silence).
The restore plans again when it runs (the count kept there with a conditional write).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

from hyperpod_ha.controllers.maintenance import Maintenance
from hyperpod_ha.controllers.models import ControllerReport
from hyperpod_ha.lease import Lease
from hyperpod_ha.restore.models import ClusterHolds, RestorePlan
from hyperpod_ha.restore.planner import RestoreInput, plan_restore
from hyperpod_ha.restore.settings import HOUR, RestoreMode, RestoreSettings
from hyperpod_ha.verdict import Verdict, VerdictPolicy

# A standby not ready: what a restore may mend ("full" has nothing to, "unknown" tells nothing).
LOST_LEVELS: Final = frozenset({"reduced", "none"})


@dataclass(frozen=True)
class RestoreDecision:
    """Whether the tick starts a run for a restore, and why (or why not), for its result."""

    start: bool
    reason: str


def decision(plan: RestorePlan) -> RestoreDecision:
    """A run only when the plan takes an action; otherwise what stops it (pure)."""
    if plan.actions:
        what = "; ".join(f"{action.kind} {action.controller} ({action.why})" for action in plan.actions)
        return RestoreDecision(True, f"a restore would act: {what}")
    why = plan.blocked or plan.stopped or next(iter(plan.reasons), "nothing to restore")
    return RestoreDecision(False, why)


def holds(lease: Lease | None, now: float) -> ClusterHolds:
    """A live drill, restore or roll-out holds the cluster; a run holding it is joined, as by any
    trigger."""
    if lease is None or lease.kind == "run" or lease.expired(now):
        return ClusterHolds()
    if lease.kind == "rollout":  # however it was started: a rotation's or an operator's
        return ClusterHolds(holder=f"a roll-out of the database secret (invocation {lease.execution_name})")
    return ClusterHolds(holder=f"{lease.kind} {lease.execution_arn or lease.execution_name}")


@dataclass(frozen=True)
class RestoreStart:
    """What a verified tick weighs a restore with: the stack's mode and hourly bound, the
    restore's document (the operator's command in the reasons), the restore's count of actions
    in an hour and the cluster's lease (each read only when the mode and the verdict ask)."""

    settings: RestoreSettings
    document: str
    actions_this_hour: Callable[[int], int]
    lease: Callable[[], Lease | None]
    cluster: str  # named in the operator's reboot command
    # The operator's silence in force, in words (hyperpod_ha.silences): no run for a restore in it.
    silenced: Callable[[], str | None] = lambda: None

    def weigh(
        self,
        verdict: Verdict,
        reports: Sequence[ControllerReport],
        maintenance: Maintenance,
        now: float,
        policy: VerdictPolicy | None = None,
        *,
        unreachable_since: Mapping[str, int] | None = None,
        cluster_id: str | None = None,
    ) -> RestoreDecision | None:
        """``None`` when there is nothing to weigh (not verified, or no standby lost)."""
        if not verdict.verified or verdict.redundancy not in LOST_LEVELS:
            return None
        mode = self.settings.restore_mode
        if mode is RestoreMode.OFF:
            return RestoreDecision(False, "RestoreRedundancy is off: the restore is left to a person")
        given = RestoreInput(
            mode,
            reports,
            self.document,
            maintenance=maintenance,
            holds=replace(holds(self.lease(), now), silenced=self.silenced()),
            used_this_hour=self.actions_this_hour(int(now) // HOUR),
            max_per_hour=self.settings.max_per_hour,
            policy=policy or VerdictPolicy(),
            cluster=self.cluster,
            now=now,
            unreachable_since=unreachable_since or {},
            unreachable_seconds=self.settings.unreachable_seconds,
            cannot_reboot=self.settings.reboot_refused(cluster_id),
        )
        return decision(plan_restore(given))
