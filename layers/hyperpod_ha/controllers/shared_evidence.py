"""What one controller sees of what the controllers share: the heartbeat, StateSaveLocation,
slurmdbd and the scheduler (sinfo), as evidence for its report."""

from __future__ import annotations

import dataclasses

from hyperpod_ha.controllers.decoding import LIST_LIMIT
from hyperpod_ha.controllers.models import (
    DbdEvidence,
    HeartbeatEvidence,
    SchedulerEvidence,
    StateSaveEvidence,
)
from hyperpod_ha.controllers.sections import failure
from hyperpod_ha.slurm import (
    NOT_FOUND_CODE,
    ClusterRegistration,
    ProbeOutput,
    ProbeSection,
    SlurmConfig,
    SlurmOutputError,
    excerpt,
    first_error,
    parse_agent_queue_size,
    parse_cluster_registrations,
    parse_dbd_ping,
    parse_heartbeat,
    parse_node_states,
    parse_state_save,
)


def heartbeat(section: ProbeSection | None) -> HeartbeatEvidence:
    if section is None:
        return HeartbeatEvidence(error="heartbeat: not in the probe output")
    if section.timed_out or section.exit_code == NOT_FOUND_CODE:
        # A heartbeat read that hangs is a hung shared file system: a takeover would be refused.
        return HeartbeatEvidence(readable=False, error=f"heartbeat: {failure(section)}")
    try:
        beat = parse_heartbeat(section.text)
    except SlurmOutputError as error:
        return HeartbeatEvidence(readable=False, error=excerpt(f"heartbeat: {error}"))
    if beat.exists is False:
        return HeartbeatEvidence(readable=False, path=beat.path, error="heartbeat file does not exist")
    if beat.writer_index is None:
        why = beat.error or (failure(section) if section.ran_out_of_time else None) or "heartbeat not read"
        return HeartbeatEvidence(readable=False, path=beat.path, error=excerpt(f"heartbeat: {why}"))
    return HeartbeatEvidence(
        readable=True,
        writer_index=beat.writer_index,
        beat_time=beat.beat_time,
        age_seconds=beat.age_seconds,
        path=beat.path,
    )


def state_save(section: ProbeSection | None) -> StateSaveEvidence:
    if section is None or section.timed_out:
        return StateSaveEvidence(error=f"StateSaveLocation check: {failure(section)}")
    state = parse_state_save(section.text)
    error = state.error
    if error is None and state.exists is None:
        error = failure(section) or "no result"
    return StateSaveEvidence(
        path=state.path,
        exists=state.exists,
        mount_target=state.mount_target,
        fstype=state.fstype,
        writable=state.writable,
        writable_by_slurm_user=state.writable_by_slurm_user,
        write_error=state.slurm_user_write_error
        if state.writable_by_slurm_user is False
        else state.write_error,
        error=excerpt(f"StateSaveLocation check: {error}") if error else None,
    )


def _registration(rows: list[ClusterRegistration], cluster: str | None) -> ClusterRegistration | None:
    if cluster is not None:
        return next((row for row in rows if row.cluster == cluster), None)
    return rows[0] if len(rows) == 1 else None


def dbd(output: ProbeOutput, config: SlurmConfig | None) -> DbdEvidence:
    known = DbdEvidence(ping_supported=_dbd_ping_supported(output), agent_queue_size=_agent_queue(output))
    clusters = output.sections.get("dbd_clusters")
    problem = failure(clusters)
    if clusters is None or (problem is not None and not clusters.ran_out_of_time):
        return dataclasses.replace(known, error=f"sacctmgr show cluster: {problem}")
    if clusters.ran_out_of_time:
        return dataclasses.replace(known, reachable=False, error=f"sacctmgr show cluster: {problem}")
    if clusters.exit_code != 0:
        error = first_error(clusters.text) or f"exited {clusters.exit_code}"
        return dataclasses.replace(known, reachable=False, error=excerpt(f"sacctmgr show cluster: {error}"))
    try:
        rows = parse_cluster_registrations(clusters.text)
    except SlurmOutputError as error:
        return dataclasses.replace(known, reachable=True, error=excerpt(f"sacctmgr show cluster: {error}"))
    row = _registration(rows, config.cluster_name if config else None)
    return dataclasses.replace(
        known,
        reachable=True,
        registered_host=row.control_host if row else None,
        registered_port=row.control_port if row else None,
        error=None if row else "this cluster is not registered with slurmdbd",
    )


def _agent_queue(output: ProbeOutput) -> int | None:
    sdiag = output.sections.get("sdiag")
    if sdiag is None or sdiag.exit_code != 0:
        return None
    return parse_agent_queue_size(sdiag.text)


def _dbd_ping_supported(output: ProbeOutput) -> bool | None:
    section = output.sections.get("dbd_ping")
    if section is None or failure(section) is not None:
        return None
    try:
        return parse_dbd_ping(section.text).supported
    except SlurmOutputError:
        return None


def scheduler(section: ProbeSection | None) -> SchedulerEvidence:
    problem = failure(section)
    if section is not None and section.ran_out_of_time:
        return SchedulerEvidence(answers=False, error=f"sinfo: {problem}")
    if problem is not None or section is None:
        return SchedulerEvidence(error=f"sinfo: {problem}")
    if section.exit_code != 0:
        error = first_error(section.text) or f"exited {section.exit_code}"
        return SchedulerEvidence(answers=False, error=excerpt(f"sinfo: {error}"))
    try:
        states = parse_node_states(section.text)
    except SlurmOutputError as error:
        return SchedulerEvidence(answers=True, error=excerpt(f"sinfo: {error}"))
    return SchedulerEvidence(answers=True, node_states=tuple(states[:LIST_LIMIT]))
