"""A drill report (the drill state machine's output) as lines an operator reads."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hyperpod_ha.human_time import duration
from hyperpod_ha_cli.execution_events import controller_label
from hyperpod_ha_cli.text import after, reason_lines


def _controller(report: Mapping[str, Any], side: str) -> str:
    found = report.get(f"{side}_controller") or {}
    name = found.get("name") or report.get(side)
    return controller_label(name, found.get("instance_id"), found.get("address")) if name else "-"


def _registrations(after_what: str, controller: Any, attempts: Any) -> list[str]:
    """One line per time the drill found slurmdbd without a registered controller."""
    lines = []
    for attempt in attempts or []:
        at = attempt.get("at_seconds")
        found = f"  after {after_what}, slurmdbd had no controller registered ({at} s in)"
        if not attempt.get("registered"):
            error = attempt.get("error") or "no detail"
            lines.append(f"{found}: registering {controller} again failed: {error}")
        elif attempt.get("reconfigured"):
            lines.append(f"{found}: scontrol reconfigure on {controller} registered it again")
        else:
            lines.append(f"{found}: {controller} had registered when looked at again")
    return lines


def render_drill_report(report: Mapping[str, Any]) -> list[str]:
    """Every figure of the report in words: controllers by name, instance id and address."""
    lines = [f"drill on {report.get('cluster')}: {str(report.get('outcome')).upper()}"]
    if report.get("dry_run"):
        lines.append("dry run: checked and planned only, no takeover")
    lines.append(f"control: {_controller(report, 'from')} -> {_controller(report, 'to')}")
    if report.get("reasons"):
        lines.append("why:")
        lines += reason_lines(report["reasons"])
    if report.get("takeover_seconds") is None and report.get("verified_seconds") is None:
        lines.append("takeover: not done")
    else:
        lines.append(
            f"takeover to {report.get('to')}: active {after(report.get('takeover_seconds'))}, "
            f"verified {after(report.get('verified_seconds'))}"
        )
    lines += _registrations("the takeover", report.get("to"), report.get("takeover_registrations"))
    lines.append(_jobs(report))
    lines.append(_test_job(report.get("test_job")))
    lines += _hand_back(report.get("hand_back"))
    if report.get("verified") is not None:
        state = "verified" if report["verified"] else "NOT verified"
        lines.append(f"final verdict: {report.get('verdict') or '-'} ({state})")
        lines += reason_lines(report.get("verdict_reasons") or [])
    if report.get("joined_triggers"):
        lines.append(f"triggers that joined the drill: {report['joined_triggers']}")
    incident = report.get("incident")
    if isinstance(incident, Mapping) and incident.get("ops_item_id"):
        lines.append(f"incident: {incident['ops_item_id']} (the drill left the cluster not verified)")
    if report.get("ops_item_id"):
        # The drill's own record, resolved when written: not an incident.
        lines.append(f"drill record: OpsItem {report['ops_item_id']} (resolved)")
    if report.get("execution_link"):
        lines.append(f"execution: {report['execution_link']}")
    return lines


def _jobs(report: Mapping[str, Any]) -> str:
    jobs = report.get("jobs")
    if not jobs:
        survived = report.get("jobs_survived")
        return (
            "jobs: not checked" if survived is None else f"jobs: {'all' if survived else 'NOT all'} survived"
        )
    lost = jobs.get("lost") or {}
    lost_text = ", ".join(f"{job} ({state})" for job, state in lost.items()) if lost else "none"
    return (
        f"jobs: {len(jobs.get('before') or [])} running before, "
        f"{len(jobs.get('survived') or [])} survived, lost: {lost_text}"
    )


def _test_job(test_job: Mapping[str, Any] | None) -> str:
    if not test_job:
        return "test job: not run"
    line = f"test job {test_job.get('id') or '-'}: {test_job.get('state') or 'not submitted'}"
    if isinstance(test_job.get("seconds"), int | float):
        line += f" in {duration(float(test_job['seconds']))}"
    if not test_job.get("ran"):
        line += " (did not run)"
    if test_job.get("error"):
        line += f": {test_job['error']}"
    return line


def _hand_back(hand_back: Mapping[str, Any] | None) -> list[str]:
    if not hand_back:
        return ["hand-back: not done"]
    to = hand_back.get("to")
    if hand_back.get("verified"):
        line = f"hand-back to {to}: verified {after(hand_back.get('verified_seconds'))}"
    else:
        line = f"hand-back to {to}: NOT verified ({hand_back.get('verdict') or 'no verdict'})"
    line += f", active {after(hand_back.get('takeover_seconds'))}"
    return [line, *_registrations("the hand-back", to, hand_back.get("registrations"))]
