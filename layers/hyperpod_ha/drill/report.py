"""The drill report: the execution's output (the contract's JSON) and its plain-text summary."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from hyperpod_ha import console_links, topic_messages


def _figures(phase: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not phase:
        return None
    return {
        "to": phase.get("target"),
        "takeover_seconds": phase.get("active_seconds"),
        "verified_seconds": phase.get("verified_seconds"),
        "verdict": phase.get("verdict"),
        "verified": bool(phase.get("verified")),
        "checks": phase.get("checks"),
        "registrations": phase.get("registrations") or [],
    }


def _controller(ref: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A planned controller as an operator finds it: name, instance id, address."""
    if not ref:
        return None
    return {"name": ref.get("name"), "instance_id": ref.get("instance_id"), "address": ref.get("private_ip")}


def build_report(
    state: Mapping[str, Any],
    outcome: str,
    reasons: list[str],
    verified: bool,
    joined: int,
    execution_id: str,
) -> dict[str, Any]:
    request = state.get("request") or {}
    plan = state.get("plan") or {}
    takeover = state.get("takeover")
    hand_back = state.get("hand_back")
    last = hand_back or takeover
    jobs = state.get("jobs") or None
    test_job = state.get("test_job")
    return {
        "outcome": outcome,
        "cluster": request.get("cluster"),
        "reasons": reasons,
        "dry_run": bool(request.get("dry_run")),
        "from": (plan.get("primary") or {}).get("name"),
        "to": (plan.get("target") or {}).get("name"),
        "from_controller": _controller(plan.get("primary")),
        "to_controller": _controller(plan.get("target")),
        "takeover_seconds": (takeover or {}).get("active_seconds"),
        "verified_seconds": (takeover or {}).get("verified_seconds"),
        "takeover_registrations": (takeover or {}).get("registrations") or [],
        "verdict": (last or {}).get("verdict") or state.get("check_verdict"),
        "verdict_reasons": (last or {}).get("reasons") or [],
        # Refused: the drill changed nothing, so it says nothing about the cluster.
        "verified": None if outcome == "refused" else verified,
        "jobs_survived": jobs.get("all_survived") if jobs else None,
        "jobs": jobs,
        "test_job": (
            {key: test_job.get(key) for key in ("id", "state", "ran", "seconds", "error") if key in test_job}
            if test_job
            else None
        ),
        "hand_back": _figures(hand_back),
        "joined_triggers": joined,
        "execution_id": execution_id,
        "execution_link": console_links.execution_console_url(execution_id, execution_id.split(":")[3])
        if execution_id.count(":") >= 3
        else None,
        "finished_at": int(time.time()),
        "incident": None,
    }


def _seconds(value: Any) -> str:
    return f"{value} s" if value is not None else "not reached"


def _registrations(after: str, controller: Any, attempts: Any) -> list[str]:
    """One line per time the drill found slurmdbd without a registered controller."""
    lines = []
    for attempt in attempts or []:
        found = f"After {after}, slurmdbd had no controller registered ({attempt.get('at_seconds')} s in)"
        if attempt.get("reconfigured") and attempt.get("registered"):
            lines.append(f"{found}: `scontrol reconfigure` on {controller} registered it again.")
        elif attempt.get("registered"):
            lines.append(f"{found}: {controller} had registered when looked at again.")
        else:
            lines.append(
                f"{found}: registering {controller} again failed: {attempt.get('error') or 'no detail'}."
            )
    return lines


def summary(report: Mapping[str, Any]) -> tuple[str, str]:
    """Subject and plain-text body for the notification topic."""
    cluster, outcome = report.get("cluster"), str(report.get("outcome"))
    subject = topic_messages.subject_line(f"HyperPod cluster {cluster}: failover drill {outcome}")
    lines = [f"Failover drill on HyperPod cluster {cluster}: {outcome.upper()}"]
    if report.get("dry_run"):
        lines.append("Dry run: checked and planned only, no takeover.")
    if report.get("from") or report.get("to"):
        lines.append(f"Control from {report.get('from') or '-'} to {report.get('to') or '-'}.")
    lines += [f"- {reason}" for reason in report.get("reasons") or []]
    if report.get("takeover_seconds") is not None or report.get("verified_seconds") is not None:
        lines.append(
            f"Takeover: new controller active after {_seconds(report.get('takeover_seconds'))}, "
            f"verified FAILED_OVER after {_seconds(report.get('verified_seconds'))}."
        )
    jobs = report.get("jobs")
    if jobs:
        lines.append(
            f"Jobs running before: {len(jobs.get('before', []))}; survived: {len(jobs.get('survived', []))}; "
            f"lost: {jobs.get('lost') or 'none'}."
        )
    test_job = report.get("test_job")
    if test_job:
        ran = "ran" if test_job.get("ran") else "did not run"
        lines.append(f"Test job {test_job.get('id')}: {test_job.get('state')} ({ran}).")
    lines += _registrations("the takeover", report.get("to"), report.get("takeover_registrations"))
    hand_back = report.get("hand_back")
    if hand_back:
        lines.append(
            f"Hand-back to {hand_back.get('to')}: "
            f"active after {_seconds(hand_back.get('takeover_seconds'))}, "
            f"verified HEALTHY after {_seconds(hand_back.get('verified_seconds'))}."
        )
        lines += _registrations("the hand-back", hand_back.get("to"), hand_back.get("registrations"))
    if report.get("verified") is not None:
        state = "verified" if report["verified"] else "NOT verified"
        lines.append(f"Final verdict: {report.get('verdict') or '-'} ({state}).")
    if report.get("joined_triggers"):
        lines.append(
            f"Triggers that joined the drill: {report['joined_triggers']} "
            "(the drill's verdict stands for them)."
        )
    if report.get("execution_link"):
        lines.append(f"Execution: {report['execution_link']}")
    return subject, "\n".join(lines)
