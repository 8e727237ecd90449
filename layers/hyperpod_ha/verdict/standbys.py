"""The other controllers while one is active: what about them is wrong for the cluster.

A standby that is down (slurmctld not running, stopped, or the node unreachable and silent to
ping) is the same note on two and three controllers, whichever position it has: how many
standbys are left is the verdict's redundancy (:mod:`.redundancy`), not a DEGRADED verdict. What
stays a problem is what breaks the cluster's failover while the controllers run: one in the
middle of a change while another is active, a standby that refuses to take over, controllers
that cannot reach each other."""

from __future__ import annotations

from hyperpod_ha.controllers.models import ControllerReport
from hyperpod_ha.verdict.activity import hung
from hyperpod_ha.verdict.observation import Findings, Observation, ObservedController
from hyperpod_ha.verdict.phrases import describe, why_unchecked
from hyperpod_ha.verdict.reasons import ReasonCode
from hyperpod_ha.verdict.takeover import fatal, refusal


def standby_findings(seen: Observation, active: ObservedController) -> Findings:
    found = Findings()
    for index in sorted(seen.controllers):
        other = seen.controllers[index]
        if other is active:
            continue
        old_primary = index == 0 and active.index != 0
        report = other.checked
        if report is None:
            found.extend(_unchecked(seen, other, old_primary))
            continue
        if active.index is not None and seen.seen_by(index, active.index) is False:
            found.problem(
                ReasonCode.STANDBY_CANNOT_REACH_ACTIVE,
                f"{other.key} cannot reach the active controller {active.key} (ping says DOWN)",
            )
        found.extend(_checked(seen, other, report, active, old_primary))
    return found


def _checked(
    seen: Observation,
    other: ObservedController,
    report: ControllerReport,
    active: ObservedController,
    old_primary: bool,
) -> Findings:
    found = Findings()
    if hung(seen, other):
        what = "stopped" if report.slurmctld.stopped else "running but not answering"
        text = f"{other.key}: slurmctld {what} (process state {report.slurmctld.process_state or '?'})"
        if old_primary:
            found.note(
                ReasonCode.STANDBY_DOWN,
                f"{text}: the old primary asks for control back when it answers again",
            )
        else:
            found.note(ReasonCode.STANDBY_DOWN, text)
    elif report.slurmctld.running is not True:
        died = fatal(report)
        why = f": {died}" if died else ""
        if old_primary:
            found.note(
                ReasonCode.STANDBY_DOWN, f"{other.key} (the configured primary): slurmctld not running{why}"
            )
        else:
            found.note(ReasonCode.STANDBY_DOWN, f"standby {other.key}: slurmctld not running{why}")
    elif report.role.logged not in (None, "standby"):
        # Starting, stopping or taking over while another controller is active: in flux.
        found.problem(ReasonCode.STANDBY_IN_FLUX, f"{describe(seen, other)} while {active.key} is active")
    elif (refused := refusal(seen, other)) is not None:
        # It would not take over now: the failover the cluster counts on is not there.
        found.problems.append(refused)
    elif (
        other.index is not None
        and active.index is not None
        and seen.seen_by(active.index, other.index) is False
    ):
        found.problem(
            ReasonCode.STANDBY_NOT_ANSWERING_PING,
            f"standby {other.key} does not answer ping from {active.key}",
        )
    else:
        found.note(ReasonCode.CONTROLLER_STATE, f"{describe(seen, other)} (standby)")
    return found


def _unchecked(seen: Observation, other: ObservedController, old_primary: bool) -> Findings:
    found = Findings()
    why = why_unchecked(other.report)
    up = seen.responding(other.index) if other.index is not None else None
    if up:
        found.note(ReasonCode.STANDBY_UNCHECKED, f"{other.key} could not be checked ({why}) but answers ping")
    elif old_primary:
        found.note(ReasonCode.STANDBY_DOWN, f"{other.key} (the configured primary) is not active: {why}")
    else:
        found.note(
            ReasonCode.STANDBY_DOWN,
            f"standby {other.key} could not be checked ({why}) and does not answer ping",
        )
    return found
