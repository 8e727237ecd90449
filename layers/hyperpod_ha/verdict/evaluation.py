"""From every controller's report to one verdict, with reasons and the evidence per controller."""

from __future__ import annotations

from collections.abc import Sequence

from hyperpod_ha.controllers.models import ControllerReport
from hyperpod_ha.slurm import applying, excerpt
from hyperpod_ha.verdict.activity import active_controllers, split_brain_reasons
from hyperpod_ha.verdict.crash_cause import config_crash_reasons
from hyperpod_ha.verdict.degradation import one_active
from hyperpod_ha.verdict.drift import drift_problems
from hyperpod_ha.verdict.evidence import evidence
from hyperpod_ha.verdict.missed_events import missed_events
from hyperpod_ha.verdict.models import (
    DEGRADED,
    DOWN,
    MAX_REASONS,
    MAX_REPORTS,
    SPLIT_BRAIN,
    UNKNOWN,
    VERIFIED,
    Verdict,
    VerdictName,
)
from hyperpod_ha.verdict.observation import Observation, ObservedController, observe
from hyperpod_ha.verdict.phrases import describe
from hyperpod_ha.verdict.readiness import readiness_notes
from hyperpod_ha.verdict.reasons import Reason, ReasonCode, most_severe
from hyperpod_ha.verdict.redundancy import redundancy
from hyperpod_ha.verdict.settings import VerdictPolicy
from hyperpod_ha.verdict.takeover import down_reasons


def evaluate(
    reports: Sequence[ControllerReport],
    policy: VerdictPolicy | None = None,
    *,
    attempt: int | None = None,
    config_strategy: str | None = None,
) -> Verdict:
    """One verdict from the controllers' reports (``config_strategy``: the cluster's
    ``SlurmConfigStrategy``, told where a controller's slurm.conf is a local copy)."""
    seen = observe(reports[:MAX_REPORTS], policy or VerdictPolicy(), config_strategy)
    name, reasons, active = _judge(seen)
    crashes = [Reason(ReasonCode.CONFIG_CHANGE_CRASH, text) for text in config_crash_reasons(seen)]
    # With nobody active, the change every controller died on is what on-call reads first.
    reasons[1:1] = crashes if name is DOWN else []
    missed, missed_notes = missed_events(seen)
    reasons += [Reason(ReasonCode.SLURMCTLD_READINESS, text) for text in readiness_notes(seen)]
    reasons += ([] if name is DOWN else crashes) + [
        Reason(ReasonCode.NOTIFICATIONS_FAILED, text) for text in missed_notes
    ]
    # DEGRADED's headline: its most severe problem, wherever the rules put it.
    problem = most_severe(reasons) if name is DEGRADED else None
    left = redundancy(seen, active[0] if len(active) == 1 else None)
    if left.level == "none" and reasons:
        # Said right after who is active: a verified failover with nothing left to fail over to.
        at = 1 if name in VERIFIED else len(reasons)
        reasons.insert(at, left.lost_reason())
    return Verdict(
        name=name,
        reasons=tuple(Reason(r.code, excerpt(r.text)) for r in dict.fromkeys(reasons))[:MAX_REASONS],
        active_controller=active[0].key if len(active) == 1 else None,
        configured_primary=seen.hosts[0].name if seen.hosts else None,
        evidence=evidence(seen, {c.key for c in active}),
        attempt=attempt,
        problem=excerpt(problem.text) if problem else None,
        redundancy=left.level,
        standbys=left.standbys,
        not_ready=left.not_ready,
        missed_notifications=missed,
        advisories=tuple(row.to_json() for row in applying(running_releases(seen))),
    )


def running_releases(seen: Observation) -> dict[str, str | None]:
    """Each checked controller's Slurm release (its own ``slurmctld -V``)."""
    return {c.key: c.checked.failover.version for c in seen.everyone if c.checked is not None}


def _judge(seen: Observation) -> tuple[VerdictName, list[Reason], list[ObservedController]]:
    """The verdict, its reasons and the controllers taken as active."""
    if not seen.checked:
        reasons = [Reason(ReasonCode.NO_CONTROLLER_CHECKED, "no controller could be checked")]
        state = ReasonCode.CONTROLLER_STATE
        reasons += [Reason(state, describe(seen, c)) for c in seen.everyone if c.report is not None]
        return UNKNOWN, reasons, []
    active = active_controllers(seen)
    # Drift never hides a worse verdict: beside DOWN and SPLIT_BRAIN it is only told.
    if len(active) >= 2:
        return SPLIT_BRAIN, split_brain_reasons(seen, active) + drift_problems(seen, None), active
    if not active:
        return DOWN, down_reasons(seen) + drift_problems(seen, None), []
    name, reasons = one_active(seen, active[0])
    return name, reasons, active
