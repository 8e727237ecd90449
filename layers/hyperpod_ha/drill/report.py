"""The drill report: the execution's output (the contract's JSON); its message is :mod:`.summary`."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from hyperpod_ha import console_links
from hyperpod_ha.human_time import parse_utc


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
        # A step left out because the running release has a known defect it walks into.
        "skipped": phase.get("skipped") or [],
    }


def _controller(ref: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A planned controller as an operator finds it: name, instance id, address."""
    if not ref:
        return None
    return {
        "name": ref.get("name"),
        "instance_id": ref.get("instance_id"),
        "address": ref.get("private_ip"),
        "target": ref.get("target"),
    }


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
    checked = {"redundancy": state.get("check_redundancy"), "standbys": state.get("check_standbys")}
    left: Mapping[str, Any] = last if last and last.get("redundancy") is not None else checked
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
        # What the last check left for the next failover: the last phase's, else the first check's.
        "redundancy": left.get("redundancy"),
        "standbys": [str(s) for s in left.get("standbys") or []],
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
        "started_at": parse_utc(state.get("started_at")),
        "finished_at": int(time.time()),
        "incident": None,
    }
