"""The drill's message on the notification topic, in the one form: what was asked, which
controllers (name, instance id, address), the figures as durations people read, every reason,
and next steps. Pure: the report (:mod:`.report`), the region and the clock are passed in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hyperpod_ha.human_time import duration, utc_minute
from hyperpod_ha.topic_messages import Cuttable, TopicMessage, message
from hyperpod_ha.topic_messages.sections import (
    ControllerLine,
    controller_lines,
    facts,
    next_steps,
    on_call_command,
    reason_lines,
    when,
)


def _took(value: Any) -> str:
    return duration(float(value)) if isinstance(value, int | float) else "not reached"


def _controller(entry: Any, role: str) -> ControllerLine | None:
    if not isinstance(entry, Mapping) or not entry.get("name"):
        return None
    return ControllerLine(
        name=str(entry["name"]),
        instance_id=entry.get("instance_id"),
        address=entry.get("address"),
        target=entry.get("target"),
        state=role,
    )


def _registrations(after: str, controller: Any, attempts: Any) -> list[str]:
    """One line per time the drill found slurmdbd without a registered controller."""
    lines = []
    for attempt in attempts or []:
        found = (
            f"After {after}, slurmdbd had no controller registered ({_took(attempt.get('at_seconds'))} in)"
        )
        if attempt.get("reconfigured") and attempt.get("registered"):
            lines.append(f"{found}: `scontrol reconfigure` on {controller} registered it again.")
        elif attempt.get("registered"):
            lines.append(f"{found}: {controller} had registered when looked at again.")
        else:
            lines.append(
                f"{found}: registering {controller} again failed: {attempt.get('error') or 'no detail'}."
            )
    return lines


def _figures(report: Mapping[str, Any]) -> list[str]:
    lines = []
    if report.get("takeover_seconds") is not None or report.get("verified_seconds") is not None:
        lines.append(
            f"Takeover: {report.get('to') or 'the backup'} active after "
            f"{_took(report.get('takeover_seconds'))}, "
            f"verified FAILED_OVER after {_took(report.get('verified_seconds'))}."
        )
    jobs = report.get("jobs")
    if jobs:
        lines.append(
            f"Jobs running before: {len(jobs.get('before', []))}; survived: {len(jobs.get('survived', []))}; "
            f"lost: {', '.join(map(str, jobs.get('lost') or [])) or 'none'}."
        )
    test_job = report.get("test_job")
    if test_job:
        ran = f"ran in {_took(test_job.get('seconds'))}" if test_job.get("ran") else "did not run"
        error = f": {test_job['error']}" if test_job.get("error") else ""
        lines.append(f"Test job {test_job.get('id')}: {test_job.get('state')} ({ran}){error}.")
    lines += _registrations("the takeover", report.get("to"), report.get("takeover_registrations"))
    hand_back = report.get("hand_back")
    if hand_back:
        lines.append(
            f"Hand-back to {hand_back.get('to')}: active after {_took(hand_back.get('takeover_seconds'))}, "
            f"verified HEALTHY after {_took(hand_back.get('verified_seconds'))}."
        )
        lines += _registrations("the hand-back", hand_back.get("to"), hand_back.get("registrations"))
    if report.get("joined_triggers"):
        lines.append(
            f"Triggers that joined the drill: {report['joined_triggers']} (its verdict stands for them)."
        )
    return [f"  {line}" for line in lines]


def summary(
    report: Mapping[str, Any], region: str, now: float, *, stack_name: str | None = None
) -> TopicMessage:
    """The drill's message: severity 4, or 3 when it failed (an incident of its own is opened
    too when it left the cluster not verified). ``stack_name`` completes its commands."""
    cluster, outcome = str(report.get("cluster")), str(report.get("outcome"))
    moved = f"{report.get('from') or '-'} -> {report.get('to') or '-'}"
    verified = report.get("verified")
    final = None
    if verified is not None:
        final = f"{report.get('verdict') or '-'} ({'verified' if verified else 'NOT verified'})"
    controllers = [
        line
        for line in (
            _controller(report.get("from_controller"), "from (configured primary)"),
            _controller(report.get("to_controller"), "to"),
        )
        if line
    ]
    incident = report.get("incident") or {}
    body: list[str | Cuttable] = [f"Failover drill on HyperPod cluster {cluster}: {outcome.upper()}.", ""]
    body += facts(
        [
            ("Cluster", cluster),
            (
                "Outcome",
                outcome
                + (" (dry run: checked and planned only, no takeover)" if report.get("dry_run") else ""),
            ),
            ("Control", moved),
            (
                "Started",
                f"{when(report.get('started_at'), now) or 'at its run'}, by an operator's drill request",
            ),
            ("Finished", utc_minute(now)),
            ("Final verdict", final),
            ("Run", report.get("execution_id")),
            ("Incident", incident.get("ops_item_id")),
        ]
    )
    body += ["", *controller_lines(controllers)]
    figures = _figures(report)
    if figures:
        body += ["", "Figures:", *figures]
    if report.get("reasons"):
        body += ["", *reason_lines("Why (every reason):", [str(r) for r in report["reasons"]])]
    if report.get("verdict_reasons"):
        body += [
            "",
            *reason_lines("The last verdict's reasons:", [str(r) for r in report["verdict_reasons"]]),
        ]
    look = [f"`{on_call_command('status', cluster, region, stack_name)}` (the drill, the verdict)"]
    links = [("Drill run", report.get("execution_link"))]
    diagnose = outcome == "failed"
    body += [
        "",
        *next_steps(cluster, region, controllers, look, links, diagnose=diagnose, stack_name=stack_name),
    ]
    return message(
        cluster=cluster,
        kind="drill",
        event="notice",
        what=f"failover drill {outcome}" + (f": {moved}" if report.get("to") else ""),
        body=body,
        verdict=str(report.get("verdict") or ""),
        severity="3" if outcome == "failed" else None,
    )
