"""What one controller sees of what the controllers share: the heartbeat, StateSaveLocation,
slurmdbd, the scheduler (sinfo) and the configuration a failover needs (slurm.conf, the Slurm
version, the ON/OFF programs), as evidence for its report."""

from __future__ import annotations

import dataclasses

from hyperpod_ha.controllers.decoding import LIST_LIMIT
from hyperpod_ha.controllers.models import (
    DbdEvidence,
    FailoverConfigEvidence,
    HeartbeatEvidence,
    ProgramEvidence,
    SchedulerEvidence,
    StateSaveEvidence,
)
from hyperpod_ha.controllers.sections import failure, parsed
from hyperpod_ha.slurm import (
    NOT_FOUND_CODE,
    ClusterRegistration,
    PrimaryProgram,
    ProbeOutput,
    ProbeSection,
    SlurmConfig,
    SlurmOutputError,
    excerpt,
    first_error,
    parse_agent_queue_size,
    parse_cluster_registrations,
    parse_dbd_ping,
    parse_failover_conf,
    parse_heartbeat,
    parse_node_states,
    parse_slurm_conf,
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
        source=state.source,
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


def failover_config(output: ProbeOutput) -> FailoverConfigEvidence:
    """This controller's slurm.conf, version and ON/OFF programs; each field unknown (None) when
    the node could not say it."""
    section = output.sections.get("failover_conf")
    problem = failure(section)
    if problem is not None or section is None:
        return FailoverConfigEvidence(error=f"failover configuration: {problem}")
    found = parse_failover_conf(section.text)
    # This node's own slurm.conf: what its slurmctld reads when it starts or takes over.
    conf = parsed(output, "slurm_conf", parse_slurm_conf)
    return FailoverConfigEvidence(
        version=found.version,
        conf_path=found.conf_path,
        conf_link=found.conf_link,
        conf_resolved=found.conf_resolved,
        conf_fstype=found.conf_fstype,
        conf_source=found.conf_source,
        conf_sha256=found.conf_sha256,
        controllers=conf.controllers[:LIST_LIMIT] if conf else (),
        slurmctld_timeout=conf.slurmctld_timeout if conf else None,
        state_save_location=conf.state_save_location if conf else None,
        on_prog=_program(found.program("file_on_prog")),
        off_prog=_program(found.program("file_off_prog")),
        running_on_prog=_program(found.program("running_on_prog")),
        running_off_prog=_program(found.program("running_off_prog")),
        error=excerpt(f"slurm.conf: {found.conf_error}") if found.conf_error else None,
    )


def _program(program: PrimaryProgram) -> ProgramEvidence:
    return ProgramEvidence(configured=program.configured, path=program.path, state=program.state)
