"""How loaded the controllers are, as one node sees it: sdiag's figures of the active slurmctld,
MaxDBDMsgs, and the round trips and StateSaveLocation write this node timed."""

from __future__ import annotations

from hyperpod_ha.controllers.decoding import LIST_LIMIT
from hyperpod_ha.controllers.models import LoadEvidence, RpcEvidence
from hyperpod_ha.controllers.sections import failure, parsed
from hyperpod_ha.slurm import (
    ProbeOutput,
    RpcRow,
    dbd_message_limit,
    excerpt,
    first_error,
    parse_node_states,
    parse_sdiag,
    parse_state_save,
)


def load(output: ProbeOutput) -> LoadEvidence:
    """Each figure ``None`` when the node could not tell it; ``error`` says why sdiag told nothing."""
    timed = LoadEvidence(
        sdiag_ms=_answered_ms(output, "sdiag"),
        ping_ms=_answered_ms(output, "ping"),
        state_save_write_ms=_write_ms(output),
        max_dbd_msgs=_dbd_limit(output),
    )
    sdiag = output.sections.get("sdiag")
    problem = failure(sdiag)
    if problem is not None or sdiag is None:
        return _with(timed, error=f"sdiag: {problem}")
    if sdiag.exit_code != 0:
        return _with(timed, error=excerpt(f"sdiag: {first_error(sdiag.text) or f'exited {sdiag.exit_code}'}"))
    seen = parse_sdiag(sdiag.text)
    if seen.empty:
        return _with(timed, error="sdiag: none of its figures in its output")
    return LoadEvidence(
        sampled_at=seen.sampled_at,
        since=seen.since,
        server_threads=seen.server_threads,
        agent_queue=seen.agent_queue,
        agent_count=seen.agent_count,
        agent_threads=seen.agent_threads,
        dbd_agent_queue=seen.dbd_agent_queue,
        max_dbd_msgs=timed.max_dbd_msgs,
        main_cycle_last_us=seen.main_cycle_last_us,
        main_cycle_mean_us=seen.main_cycle_mean_us,
        backfill_cycle_last_us=seen.backfill_cycle_last_us,
        backfill_cycle_mean_us=seen.backfill_cycle_mean_us,
        rpc_types=_rows(seen.rpc_types),
        rpc_users=_rows(seen.rpc_users),
        sdiag_ms=timed.sdiag_ms,
        ping_ms=timed.ping_ms,
        state_save_write_ms=timed.state_save_write_ms,
    )


def _with(timed: LoadEvidence, *, error: str) -> LoadEvidence:
    return LoadEvidence(
        max_dbd_msgs=timed.max_dbd_msgs,
        sdiag_ms=timed.sdiag_ms,
        ping_ms=timed.ping_ms,
        state_save_write_ms=timed.state_save_write_ms,
        error=error,
    )


def _rows(rows: tuple[RpcRow, ...]) -> tuple[RpcEvidence, ...]:
    return tuple(RpcEvidence(row.name, row.count, row.total_us) for row in rows[:LIST_LIMIT])


def _answered_ms(output: ProbeOutput, name: str) -> int | None:
    """The section's time when its command answered (a round trip); not when it failed."""
    section = output.sections.get(name)
    if section is None or failure(section) is not None or section.exit_code != 0:
        return None
    return section.millis


def _write_ms(output: ProbeOutput) -> int | None:
    found = parsed(output, "state_save", parse_state_save)
    return found.write_ms if found is not None else None


def _dbd_limit(output: ProbeOutput) -> int | None:
    config = output.sections.get("config")
    if config is None or failure(config) is not None or config.exit_code != 0:
        return None  # slurm.conf alone is not what slurmctld runs with
    states = parsed(output, "sinfo", parse_node_states)
    nodes = sum(state.count for state in states) if states else None
    return dbd_message_limit(config.text, nodes)
