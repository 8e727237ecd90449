"""Why no backup took over: its own refusal, in Slurm's words, and what the heartbeat says.

Slurm 24.11's standby logs why it does not take over (the heartbeat file cannot be read, is
still being updated, or does not exist yet). With no controller active, the verdict is DOWN
and that reason comes first among its reasons. A fresh beat from a controller nobody reaches is
a network partition, in which the backups never take over. A slurmctld that exited on a fatal
error after its last role line (Slurm 25.11's backup taking over without a state file) says why
in its own words."""

from __future__ import annotations

from hyperpod_ha.controllers.models import ControllerReport
from hyperpod_ha.human_time import ago
from hyperpod_ha.verdict.activity import hung
from hyperpod_ha.verdict.observation import Observation, ObservedController
from hyperpod_ha.verdict.phrases import describe, why_unchecked
from hyperpod_ha.verdict.reasons import Reason, ReasonCode


def refusal(seen: Observation, controller: ObservedController) -> Reason | None:
    """A running standby's current reason for not taking over (Slurm 24.11 logs one
    every SlurmctldTimeout/3 s while it lasts, and a wait for the heartbeat every second):
    one older than SlurmctldTimeout plus the slack is over."""
    report = controller.checked
    if report is None or report.role.refusal is None or report.slurmctld.running is not True:
        return None
    age = report.role.refusal_age_seconds
    if age is not None and age > seen.fresh_seconds:
        return None
    when = f" ({ago(age)})" if age is not None else ""
    if report.role.refusal == "waiting_for_heartbeat":
        return Reason(
            ReasonCode.TAKEOVER_WAITS_FOR_HEARTBEAT,
            f"{controller.key} waits for the heartbeat file to exist{when}: "
            "it cannot take over until it reads it",
        )
    return Reason(
        ReasonCode.TAKEOVER_REFUSED,
        f"{controller.key} refuses to take over{when}: {report.role.refusal_message}",
    )


def fatal(report: ControllerReport) -> str | None:
    """Why a slurmctld that does not run exited, in its own last words (a ``fatal:`` line)."""
    if report.role.fatal_message is None or report.slurmctld.running is True:
        return None
    age = report.role.fatal_age_seconds
    when = f" {ago(age)}" if age is not None else ""
    return f"its slurmctld exited on a fatal error{when}: {report.role.fatal_message}"


def down_reasons(seen: Observation) -> list[Reason]:
    """The reasons of a cluster with no active controller."""
    everyone = seen.everyone
    reasons = [Reason(ReasonCode.NO_ACTIVE_CONTROLLER, "no controller is active")]
    # The standby's own words first: Slurm 24.11 says why it does not take over.
    reasons += [refused for c in everyone if (refused := refusal(seen, c)) is not None]
    # A backup that took over and died at once (Slurm 25.11 without a state file) says why.
    reasons += [
        Reason(ReasonCode.SLURMCTLD_FATAL, f"{c.key}: {died}")
        for c in everyone
        if c.checked and (died := fatal(c.checked)) is not None
    ]
    reasons.append(_heartbeat_reason(seen))
    reasons += [Reason(ReasonCode.CONTROLLER_STATE, describe(seen, c)) for c in everyone]
    return reasons + list(seen.conflicts)


def _heartbeat_reason(seen: Observation) -> Reason:
    beat = seen.fresh_beat
    if beat is not None and beat.writer in seen.controllers:
        writer = seen.controllers[beat.writer]
        if writer.checked is None:
            return Reason(
                ReasonCode.HEARTBEAT_HOLDER_UNREACHABLE,
                f"{writer.key} writes the heartbeat (last beat {ago(beat.age)}) but no checked "
                f"controller reaches it ({why_unchecked(writer.report)}): network partition? "
                "The backups do not take over while its heartbeat stays fresh",
            )
        if hung(seen, writer):
            return Reason(
                ReasonCode.HEARTBEAT_HOLDER_HUNG,
                f"{writer.key} still holds the heartbeat (last beat {ago(beat.age)}) but its slurmctld "
                f"does not answer: a backup takes over after SlurmctldTimeout ({seen.timeout} s)",
            )
        return Reason(
            ReasonCode.HEARTBEAT_WRITER_NOT_ACTIVE,
            f"heartbeat written {ago(beat.age)} by {writer.key}, which is not active: "
            f"a backup takes over after SlurmctldTimeout ({seen.timeout} s)",
        )
    if seen.last_beat is not None:
        return Reason(
            ReasonCode.HEARTBEAT_NOT_WRITTEN,
            f"nobody writes the heartbeat: last beat {ago(seen.last_beat.age)} "
            f"by {seen.name(seen.last_beat.writer)}",
        )
    return Reason(ReasonCode.HEARTBEAT_UNREADABLE, "the heartbeat could not be read on any controller")
