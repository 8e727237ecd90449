"""The evidence per controller that goes with a verdict: what each report says, in a few fields."""

from __future__ import annotations

from typing import Any

from hyperpod_ha.controllers.decoding import LIST_LIMIT
from hyperpod_ha.controllers.models import ControllerReport, ProgramEvidence
from hyperpod_ha.slurm import TEXT_LIMIT
from hyperpod_ha.verdict.observation import Observation, ObservedController
from hyperpod_ha.verdict.phrases import slurmctld_state


def evidence(seen: Observation, active_keys: set[str]) -> dict[str, dict[str, Any]]:
    summary: dict[str, dict[str, Any]] = {}
    for controller in seen.everyone[:LIST_LIMIT]:
        report = controller.report
        entry = _entry(seen, controller, active_keys)
        if (checked := controller.checked) is not None:
            entry.update(_checked_entry(seen, checked))
        key = controller.key
        if key in summary and report is not None:
            key = f"{key} [{report.instance_id}]"
        summary[key[:TEXT_LIMIT]] = entry
    return summary


def _entry(seen: Observation, controller: ObservedController, active_keys: set[str]) -> dict[str, Any]:
    report, index, beat = controller.report, controller.index, seen.fresh_beat
    return {
        "position": index,
        "instance_id": report.instance_id if report else None,
        # Who it is, for a person: its address and the target of `aws ssm start-session`.
        "address": report.private_ip if report else None,
        "target": report.target if report else None,
        "status": report.status.value if report else "NO_REPORT",
        "reason": report.reason if report else None,
        "active": controller.key in active_keys,
        "answers_ping": seen.responding(index) if index is not None else None,
        "writes_heartbeat": beat.writer == index if beat and index is not None else None,
    }


def _checked_entry(seen: Observation, checked: ControllerReport) -> dict[str, Any]:
    writer = checked.heartbeat.writer_index
    return {
        "slurmctld": slurmctld_state(checked),
        "logged_role": checked.role.logged,
        "takeover_refusal": checked.role.refusal,
        "slurmctld_fatal": checked.role.fatal_message,
        "slurmdbd_reachable": checked.dbd.reachable,
        "slurmdbd_registered_host": checked.dbd.registered_host,
        "slurmdbd_error": checked.dbd.error,
        "state_save_writable": checked.state_save.effectively_writable,
        "heartbeat_age_seconds": checked.heartbeat.age_seconds,
        "heartbeat_writer": seen.name(writer) if writer is not None else None,
        "sinfo_answers": checked.scheduler.answers,
        # Slurm's own answer (25.11+): the HTTP status of /readyz, or null and why.
        "readyz": checked.http.readyz,
        "readyz_why": checked.http.why,
        "hyperpod_node_actions": list(checked.hyperpod.node_actions),
        # The Slurm triggers (strigger --get: the active slurmctld's) and this node's program.
        "slurm_triggers_missing": checked.slurm_triggers.missing_count,
        "slurm_trigger_program": checked.slurm_triggers.program_state,
        **_failover_entry(checked),
        # Where on-call looks first.
        "slurmctld_log": checked.config.log_file,
        "state_save_location": checked.state_save.path or checked.config.state_save_location,
    }


def _failover_entry(checked: ControllerReport) -> dict[str, Any]:
    """What the next failover needs from this controller, in a few fields (the drift rules')."""
    failover = checked.failover
    return {
        "slurm_version": failover.version,
        "slurm_link": checked.hyperpod.slurm_link,  # /opt/slurm's target (HyperPod's AMIs)
        "slurm_conf_link": failover.conf_link,
        "slurm_conf_resolved": failover.conf_resolved,
        "slurm_conf_sha256": failover.conf_sha256[:16] if failover.conf_sha256 else None,
        "on_prog": _program(failover.on_prog),
        "off_prog": _program(failover.off_prog),
    }


def _program(program: ProgramEvidence) -> str | None:
    """``executable``, ``missing``, ``not_executable``, ``not set``, or None when unknown."""
    if program.configured is None:
        return None
    return program.state if program.configured else "not set"
