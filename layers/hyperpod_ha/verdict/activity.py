"""Who is active: what ``scontrol ping`` labels a controller is NOT who is active.

Slurm's own answer first (25.11+): a controller whose slurmctld answers ``/readyz`` is active
exactly when that answer is 204, whatever its log says; two or more 204s are a split brain in
Slurm's own words. Where a controller gave no /readyz answer (24.11, ``disable_http``, a build
without an HTTP parser, a slurmctld that is down or hung), the older signals decide for it: a
controller is taken as active when its slurmctld runs (not stopped), its log last said
``Running as primary controller`` (or, with no log line found, the heartbeat names it as the
writer) and not every controller sees it DOWN. A controller nobody could check is active when
it writes a fresh heartbeat and others reach it. More than one active is a split brain."""

from __future__ import annotations

from hyperpod_ha.human_time import ago
from hyperpod_ha.slurm import READY
from hyperpod_ha.verdict.observation import Observation, ObservedController
from hyperpod_ha.verdict.phrases import role_phrase
from hyperpod_ha.verdict.reasons import Reason, ReasonCode


def readyz(controller: ObservedController) -> int | None:
    """The HTTP status of the controller's own ``/readyz`` (None: no answer, or not checked)."""
    report = controller.checked
    return report.http.readyz if report is not None else None


def claims_active(seen: Observation, controller: ObservedController) -> bool:
    report = controller.checked
    if report is None:
        return False
    if (status := readyz(controller)) is not None:
        return status == READY  # Slurm's own answer: in control, or not
    if report.slurmctld.running is not True:
        return False
    if report.role.logged == "primary":
        return True
    # No role line found (log elsewhere, rotated): the heartbeat's writer index decides.
    return (
        report.role.logged is None
        and controller.index is not None
        and seen.fresh_beat is not None
        and seen.fresh_beat.writer == controller.index
    )


def hung(seen: Observation, controller: ObservedController) -> bool:
    report = controller.checked
    if report is None:
        return False
    if report.slurmctld.stopped:
        return True
    # A slurmctld that logged its start but no role yet does not answer ping for a while.
    return (
        report.slurmctld.running is True
        and report.role.logged != "starting"
        and controller.index is not None
        and seen.responding(controller.index) is False
    )


def active_controllers(seen: Observation) -> list[ObservedController]:
    ready = [c for c in seen.everyone if readyz(c) == READY]
    if len(ready) >= 2:
        return ready  # each says it is in control: split brain, whoever reaches whom
    active = [c for c in seen.everyone if claims_active(seen, c) and not hung(seen, c)]
    by_heartbeat = _active_by_heartbeat(seen)
    if by_heartbeat is not None and by_heartbeat not in active:
        active.append(by_heartbeat)
    return active


def _active_by_heartbeat(seen: Observation) -> ObservedController | None:
    """A controller we could not check that writes the heartbeat and that others reach."""
    beat = seen.fresh_beat
    if beat is None or beat.writer not in seen.controllers:
        return None
    writer = seen.controllers[beat.writer]
    if writer.checked is not None:
        return None  # its own report decides
    return writer if seen.responding(beat.writer) is True else None


def why_active(seen: Observation, controller: ObservedController) -> str:
    parts: list[str] = []
    report = controller.checked
    if readyz(controller) == READY:
        parts.append("its /readyz answers 204 (Slurm's own answer)")
    if report is not None and report.role.logged == "primary":
        parts.append(role_phrase(report))
    if seen.fresh_beat is not None and seen.fresh_beat.writer == controller.index:
        parts.append(f"writes the heartbeat (last beat {ago(seen.fresh_beat.age)})")
    if controller.index is not None and seen.responding(controller.index):
        parts.append("answers ping")
    return ", ".join(parts) or "no direct evidence"


def split_brain_reasons(seen: Observation, active: list[ObservedController]) -> list[Reason]:
    reasons = [Reason(ReasonCode.SEVERAL_ACTIVE, f"{len(active)} controllers act as the active one")]
    reasons += [
        Reason(ReasonCode.ACTIVE_CONTROLLER, f"{c.key} is active: {why_active(seen, c)}") for c in active
    ]
    writers = sorted({b.writer for b in seen.beats if b.age <= seen.fresh_seconds})
    if len(writers) > 1:
        names = " and ".join(seen.name(w) for w in writers)
        reasons.append(
            Reason(ReasonCode.HEARTBEAT_SEVERAL_WRITERS, f"heartbeat written by {names} within moments")
        )
    return reasons + list(seen.conflicts)
