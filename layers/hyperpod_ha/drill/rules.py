"""The drill's decisions, pure: refuse or plan, measure a recovery, judge jobs, the outcome."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from hyperpod_ha.controllers.models import ControllerReport
from hyperpod_ha.drill.models import ControllerRef, DrillPlan, DrillRequest
from hyperpod_ha.drill.node import NodeOutput
from hyperpod_ha.slurm import walking
from hyperpod_ha.slurm.advisories import Step

HEALTHY: Final = "HEALTHY"
# Times a phase may register the new controller with slurmdbd again (see ``needs_registration``).
MAX_REGISTRATIONS: Final = 2
FAILED_OVER: Final = "FAILED_OVER"
# squeue states of a job that is still fine, and sacct states of one that ended fine.
ALIVE_STATES: Final = frozenset({"RUNNING", "COMPLETING", "COMPLETED", "CONFIGURING", "SUSPENDED"})
ENDED_WELL: Final = frozenset({"COMPLETED"})
TEST_JOB_FAILED: Final = frozenset(
    {"FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "PREEMPTED"}
)


def controllers_from_reports(reports: Sequence[ControllerReport]) -> list[ControllerRef]:
    """Each checked controller that knows its SlurmctldHost position, by position."""
    found: dict[int, ControllerRef] = {}
    for report in reports:
        index, name = report.node.controller_index, report.node.controller_name
        if index is None or not name or not report.target or index in found:
            continue
        found[index] = ControllerRef(
            index, name, report.instance_id, report.target, report.hostname, report.private_ip
        )
    return [found[index] for index in sorted(found)]


def plan_drill(
    request: DrillRequest, verdict: Mapping[str, Any], reports: Sequence[ControllerReport]
) -> DrillPlan:
    """Refuse unless the check now says HEALTHY, the target is a backup that answers, and it is a
    ready standby with redundancy ``full`` (the verdict's ``redundancy``, as every verdict has it)."""
    name = verdict.get("verdict")
    if name != HEALTHY:
        reasons = "; ".join(str(r) for r in verdict.get("reasons") or [])
        return DrillPlan(f"the cluster is not HEALTHY now ({name}): {reasons or 'no reason given'}")
    controllers = controllers_from_reports(reports)
    primary = next((c for c in controllers if c.index == 0), None)
    if primary is None or verdict.get("active_controller") not in (None, primary.name):
        return DrillPlan("the configured primary is not the active controller")
    if (known_bad := _walks_a_defect(verdict, "takeover")) is not None:
        return DrillPlan(f"a takeover now walks into a known Slurm defect: {known_bad}", primary)
    planned = _choose_backup(request.to, primary, [c for c in controllers if c.index > 0])
    if planned.refused is not None or planned.target is None:
        return planned
    return _ready(planned, planned.target, verdict)


def _walks_a_defect(verdict: Mapping[str, Any], step: Step, only: str | None = None) -> str | None:
    """Why ``step`` would walk into a known defect of a release a controller runs (``only``: that
    controller's), from the verdict's evidence (hyperpod_ha.slurm.advisories); None when not."""
    evidence = verdict.get("evidence")
    for name, entry in evidence.items() if isinstance(evidence, Mapping) else []:
        version = entry.get("slurm_version") if isinstance(entry, Mapping) else None
        if (only is None or name == only) and isinstance(version, str) and (row := walking(version, step)):
            return f"Slurm {version} on {name}: {row.what} ({row.key}; fixed in {', '.join(row.fixed_in)})"
    return None


def _ready(planned: DrillPlan, target: ControllerRef, verdict: Mapping[str, Any]) -> DrillPlan:
    """HEALTHY admits a standby that is not ready (redundancy ``none``): a takeover to it fails
    (seen on the lab: "Unable to contact slurm controller") and one beside it leaves no standby."""
    level = str(verdict.get("redundancy") or "unknown")
    standbys = {str(s) for s in verdict.get("standbys") or []}
    raw = verdict.get("not_ready")
    not_ready = {str(k): str(v) for k, v in raw.items()} if isinstance(raw, Mapping) else {}
    if target.name not in standbys:
        why = not_ready.get(target.name, "the check did not find it ready")
        return DrillPlan(
            f"the target {target.name} is not a ready standby ({why}): a takeover to it would fail "
            f"(redundancy {level}); restore it first",
            planned.primary,
        )
    if level != "full":
        others = "; ".join(f"{n}: {why}" for n, why in not_ready.items()) or "no ready standby is known"
        return DrillPlan(
            f"redundancy is {level}, not full: {others}; after the takeover no standby would be ready",
            planned.primary,
        )
    return planned


def _choose_backup(to: str, primary: ControllerRef, backups: list[ControllerRef]) -> DrillPlan:
    if not backups:
        return DrillPlan("the cluster has no backup controller that was checked", primary)
    if to == "auto":
        return DrillPlan(None, primary, backups[0])
    if primary.known_as(to):
        return DrillPlan(f"{to} is the configured primary, already active: choose a backup", primary)
    target = next((c for c in backups if c.known_as(to)), None)
    if target is None:
        known = ", ".join(c.name for c in backups)
        return DrillPlan(f"{to} is not a checked backup controller (backups: {known})", primary)
    before = [c.name for c in backups if c.index < target.index]
    if before:
        # `scontrol takeover N` shuts down every controller before position N (seen in the lab):
        # the backups before the target would stop too, leaving no standby to verify FAILED_OVER.
        return DrillPlan(
            f"{to} is SlurmctldHost[{target.index}]: `scontrol takeover {target.index}` would stop "
            f"{', '.join(before)} too, leaving no standby; drill to the first backup ({backups[0].name})",
            primary,
        )
    return DrillPlan(None, primary, target)


def new_phase(name: str, target: ControllerRef, started_at: float, max_checks: int) -> dict[str, Any]:
    return {
        "name": name,
        "expected": FAILED_OVER if name == "takeover" else HEALTHY,
        "target": target.name,
        "started_at": started_at,
        "checks": 0,
        "max_checks": max_checks,
        "active_seconds": None,
        "verified_seconds": None,
        "verdict": None,
        "reasons": [],
        "redundancy": "unknown",
        "standbys": [],
        "verified": False,
        "registrations": [],
        "next": "check-again",
    }


def measure(phase: Mapping[str, Any], verdict: Mapping[str, Any], now: float) -> dict[str, Any]:
    """One check after a change of control: when the target answered as active, when verified."""
    updated = dict(phase, next="check-again")
    updated["checks"] = int(phase["checks"]) + 1
    elapsed = _seconds_since_start(phase, now)
    active = verdict.get("active_controller") == phase["target"]
    if active and updated["active_seconds"] is None:
        updated["active_seconds"] = elapsed
    updated["verdict"] = verdict.get("verdict")
    # Every reason (the verdict bounds them): the report and its message say each.
    updated["reasons"] = [str(r) for r in verdict.get("reasons") or []]
    # What is left after the change of control: the verdict's redundancy and ready standbys.
    updated["redundancy"] = str(verdict.get("redundancy") or "unknown")
    updated["standbys"] = [str(s) for s in verdict.get("standbys") or []]
    if active and verdict.get("verdict") == phase["expected"]:
        updated.update(verified=True, verified_seconds=elapsed, next="done")
    elif updated["checks"] >= int(phase["max_checks"]):
        updated["next"] = "done"
    elif (
        active
        and needs_registration(verdict, str(phase["target"]))
        and len(phase.get("registrations") or []) < MAX_REGISTRATIONS
    ):
        # Registering again is `scontrol reconfigure` on the new active controller: on a release
        # where that is a known defect (24.11.0: a split brain), the step is skipped and said.
        known_bad = _walks_a_defect(verdict, "reconfigure", str(phase["target"]))
        if known_bad is None:
            updated["next"] = "register"
        else:
            skipped = f"not registered with slurmdbd again (scontrol reconfigure skipped): {known_bad}"
            updated["skipped"] = [*(phase.get("skipped") or []), skipped][:MAX_REGISTRATIONS]
    return updated


def needs_registration(verdict: Mapping[str, Any], target: str) -> bool:
    """The new active controller reaches slurmdbd, which has no controller registered.

    Seen in the lab on Slurm 24.11, where every slurmctld reaches its own host's slurmdbd from
    127.0.0.1: the controller stepping down deregisters (slurmdbd clears ControlHost where host
    and port match) after the new one registered, and nothing registers it again until slurmctld
    reconnects or is reconfigured. The drill caused it, so the drill registers it again."""
    entry = (verdict.get("evidence") or {}).get(target)
    # The cluster's row is there (no error: not a missing row, not unreadable output) and
    # names no controller: what a reconfigure mends.
    return (
        isinstance(entry, Mapping)
        and bool(entry.get("active"))
        and entry.get("slurmdbd_reachable") is True
        and "slurmdbd_registered_host" in entry
        and entry["slurmdbd_registered_host"] is None
        and "slurmdbd_error" in entry
        and entry["slurmdbd_error"] is None
    )


def with_registration(phase: Mapping[str, Any], output: NodeOutput, now: float) -> dict[str, Any]:
    """The phase after registering its controller again: what that found and did, kept with the
    phase's figures; then it checks again."""
    before = output.values.get("registered_before")
    attempt = {
        "at_seconds": _seconds_since_start(phase, now),
        "registered_before": _host(before),
        "reconfigured": "reconfigure_rc" in output.values,
        "registered": _host(output.values.get("registered", before)),
        "error": ": ".join(v for v in (output.values.get("error"), output.values.get("output")) if v) or None
        if output.rc
        else None,
    }
    return {**phase, "registrations": [*(phase.get("registrations") or []), attempt], "next": "check-again"}


def _seconds_since_start(phase: Mapping[str, Any], now: float) -> float:
    return round(max(0.0, now - float(phase["started_at"])), 2)


def _host(value: str | None) -> str | None:
    return None if value in (None, "", "none") else value


def running_jobs(output: NodeOutput) -> list[str]:
    return sorted((job for job, state in output.jobs.items() if state == "RUNNING"), key=_job_order)


def judge_jobs(before: Sequence[str], after: NodeOutput) -> dict[str, Any]:
    """Each job running before: still alive, or ended well (sacct), or lost (with its state)."""
    survived: list[str] = []
    lost: dict[str, str] = {}
    for job in before:
        state = after.jobs.get(job)
        if state in ALIVE_STATES:
            survived.append(job)
            continue
        accounted = after.accounted.get(job)
        if state is None and accounted and accounted[0] in ENDED_WELL and accounted[1] == "0:0":
            survived.append(job)
            continue
        lost[job] = state or (f"{accounted[0]} exit {accounted[1]}" if accounted else "unknown")
    return {"before": list(before), "survived": survived, "lost": lost, "all_survived": not lost}


def test_job_state(job_id: str, output: NodeOutput) -> str:
    if job_id in output.jobs:
        return output.jobs[job_id]
    accounted = output.accounted.get(job_id)
    return accounted[0] if accounted else "UNKNOWN"


def follow_test_job(test_job: Mapping[str, Any], output: NodeOutput, max_checks: int) -> dict[str, Any]:
    updated = dict(test_job)
    updated["checks"] = int(test_job.get("checks", 0)) + 1
    state = test_job_state(str(test_job["id"]), output)
    updated["state"] = state
    if state == "COMPLETED":
        updated.update(ran=True, next="done")
    elif state in TEST_JOB_FAILED or updated["checks"] >= max_checks:
        updated.update(ran=False, next="done")
    else:
        updated["next"] = "check-again"
    return updated


def outcome_of(state: Mapping[str, Any]) -> tuple[str, list[str], bool]:
    """The outcome, why (when not completed), and whether the cluster was left verified."""
    plan = state.get("plan") or {}
    if state.get("lease", {}).get("taken") is False:
        return "refused", [str(state["lease"].get("reason"))], True
    if plan.get("refused"):
        return "refused", [str(plan["refused"])], True
    reasons: list[str] = []
    takeover, hand_back = state.get("takeover"), state.get("hand_back")
    last = hand_back or takeover
    verified = last is None or bool(last.get("verified"))
    if state.get("error"):
        error = state["error"]
        reasons.append(
            f"the drill stopped on an error: {error.get('Error')}: {str(error.get('Cause'))[:300]}"
        )
        verified = verified and not state.get("takeover_started")
    if takeover is not None and not takeover.get("verified"):
        reasons.append(f"the takeover was not verified FAILED_OVER (last verdict {takeover.get('verdict')})")
    jobs = state.get("jobs") or {}
    if jobs and not jobs.get("all_survived", True):
        reasons.append(f"jobs running before were lost: {jobs.get('lost')}")
    test_job = state.get("test_job")
    if test_job is not None and not test_job.get("ran"):
        reasons.append(f"the test job did not run (state {test_job.get('state')})")
    if hand_back is not None and not hand_back.get("verified"):
        reasons.append(f"the hand-back was not verified HEALTHY (last verdict {hand_back.get('verdict')})")
    return ("failed" if reasons else "completed"), reasons, verified


def _job_order(job: str) -> tuple[int, str]:
    head = job.split("_", 1)[0]
    return (int(head) if head.isdigit() else 0, job)
