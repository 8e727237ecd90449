"""One controller is active: HEALTHY, FAILED_OVER, or DEGRADED with every reason why.

DEGRADED: the active controller serves, but something the cluster needs is not right
(slurmdbd does not answer, StateSaveLocation is not writable, a standby would refuse to take
over, controllers cannot reach each other, drift that breaks the next failover, ...). A backup
serving after a failover with drift is DEGRADED too, not FAILED_OVER. A standby that is down is
a note here: the verdict's redundancy counts it (:mod:`.redundancy`)."""

from __future__ import annotations

from hyperpod_ha.verdict.accounting import accounting_findings
from hyperpod_ha.verdict.activity import why_active
from hyperpod_ha.verdict.drift import drift_problems
from hyperpod_ha.verdict.models import DEGRADED, FAILED_OVER, HEALTHY, VerdictName
from hyperpod_ha.verdict.observation import Findings, Observation, ObservedController
from hyperpod_ha.verdict.phrases import why_unchecked
from hyperpod_ha.verdict.reasons import Reason, ReasonCode
from hyperpod_ha.verdict.scheduling import scheduling_findings
from hyperpod_ha.verdict.standbys import standby_findings
from hyperpod_ha.verdict.state_save import heartbeat_findings, state_save_findings


def one_active(seen: Observation, active: ObservedController) -> tuple[VerdictName, list[Reason]]:
    found = Findings(problems=list(seen.conflicts))
    if active.index is None:
        found.problem(
            ReasonCode.ACTIVE_NOT_A_SLURMCTLD_HOST,
            f"{active.key} acts as the active controller but is no SlurmctldHost line",
        )
    if active.checked is None:
        found.problem(
            ReasonCode.ACTIVE_NOT_CHECKED,
            f"the active controller {active.key} could not be checked ({why_unchecked(active.report)})",
        )
    found.extend(accounting_findings(seen, active))
    found.extend(state_save_findings(seen))
    found.extend(heartbeat_findings(seen, active))
    found.extend(scheduling_findings(seen, active))
    found.extend(standby_findings(seen, active))
    found.extend(_unmapped_findings(seen, active))
    found.problems += drift_problems(seen, active)
    why = why_active(seen, active)
    if found.problems:
        return DEGRADED, [
            Reason(ReasonCode.ACTIVE_CONTROLLER, f"{active.key} is active: {why}"),
            *found.problems,
            *found.notes,
        ]
    if active.index == 0:
        primary = Reason(ReasonCode.PRIMARY_ACTIVE, f"{active.key} (configured primary) is active: {why}")
        return HEALTHY, [primary, *found.notes]
    took_over = f"{active.key} (SlurmctldHost[{active.index}]) took over from {seen.name(0)}: {why}"
    return FAILED_OVER, [Reason(ReasonCode.BACKUP_TOOK_OVER, took_over), *found.notes]


def _unmapped_findings(seen: Observation, active: ObservedController) -> Findings:
    found = Findings()
    for controller in seen.unmapped:
        if controller is active:
            continue
        if controller.checked is not None:
            found.note(
                ReasonCode.NOT_A_SLURMCTLD_HOST, f"{controller.key} is not one of the SlurmctldHost lines"
            )
        else:
            # A check that gave nothing (and names no controller) may hide any of them.
            why = controller.report.reason if controller.report else "no report"
            found.problem(
                ReasonCode.CHECK_GAVE_NO_EVIDENCE, f"the check of {controller.key} gave no evidence: {why}"
            )
    return found
