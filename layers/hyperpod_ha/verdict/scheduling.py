"""Scheduling: ``sinfo`` reaches the active slurmctld, and some compute node responds to it."""

from __future__ import annotations

from hyperpod_ha.verdict.observation import Findings, Observation, ObservedController
from hyperpod_ha.verdict.reasons import ReasonCode


def scheduling_findings(seen: Observation, active: ObservedController) -> Findings:
    found = Findings()
    for report in seen.checked:
        if report.scheduler.answers is False:
            where = "the active controller" if report is active.checked else "a client on this controller"
            found.problem(
                ReasonCode.SINFO_FAILS,
                f"{seen.label(report)}: {report.scheduler.error or 'sinfo failed'} "
                f"({where} cannot reach the active slurmctld)",
            )
    source = active.checked or next((r for r in seen.checked if r.scheduler.node_states), None)
    states = source.scheduler.node_states if source else ()
    if sum(s.count for s in states) and all(not s.responding for s in states):
        listed = ", ".join(f"{s.count} {s.state}" for s in states)
        found.problem(
            ReasonCode.NO_COMPUTE_NODE_RESPONDS,
            f"no compute node responds to the active controller ({listed})",
        )
    return found
