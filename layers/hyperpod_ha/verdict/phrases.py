"""How a controller's state reads in a reason: its slurmctld, the role its log says, ping."""

from __future__ import annotations

from typing import Final

from hyperpod_ha.controllers.models import ControllerReport
from hyperpod_ha.human_time import ago
from hyperpod_ha.verdict.observation import Observation, ObservedController

_ROLE_PHRASES: Final = {
    "primary": "logged 'Running as primary controller'",
    "standby": "logged 'slurmctld running in background mode' (standby)",
    "taking_over": "logged that it is taking over",
    "stopping": "logged a terminate signal last",
    "starting": "logged a start but no role yet",
}


def describe(seen: Observation, controller: ObservedController) -> str:
    report = controller.report
    if report is None:
        return f"{controller.key}: no report"
    if not report.checked:
        return f"{controller.key}: {report.status.value.lower().replace('_', ' ')}: {report.reason}"
    parts = [slurmctld_phrase(report)]
    if report.role.logged is not None:
        parts.append(role_phrase(report))
    if report.http.readyz is not None:
        parts.append(f"/readyz answers {report.http.readyz}")
    if controller.index is not None and (up := seen.responding(controller.index)) is not None:
        parts.append("answers ping" if up else "does not answer ping")
    return f"{controller.key}: " + ", ".join(parts)


def why_unchecked(report: ControllerReport | None) -> str:
    """Why a controller was not checked, in a few words (the full reason is in its evidence)."""
    if report is None:
        return "no report"
    return (report.reason or report.status.value).split(":", 1)[0]


def slurmctld_state(report: ControllerReport) -> str:
    daemon = report.slurmctld
    if daemon.running is True:
        return "running"
    if daemon.stopped:
        return "stopped"
    return "not running" if daemon.running is False else "unknown"


def slurmctld_phrase(report: ControllerReport) -> str:
    state = slurmctld_state(report)
    if state == "stopped":
        return f"slurmctld stopped (process state {report.slurmctld.process_state})"
    return f"slurmctld {state}"


def role_phrase(report: ControllerReport) -> str:
    phrase = _ROLE_PHRASES.get(report.role.logged or "", f"logged {report.role.logged}")
    age = report.role.line_age_seconds
    return f"{phrase} {ago(age)}" if age is not None else phrase
