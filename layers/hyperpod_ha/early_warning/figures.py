"""Each controller's figures at one check, from its report, the verdict (who is active) and the
last check's sample: the RPC counters' differences over the window between the two checks, and
how fast the DBD agent queue grows. Pure.

sdiag's counters only grow until they are reset (``sdiag -r``, and each day at midnight on some
clusters): two samples are compared only when both are of the same controller with the same
reset time. Without that, the averages are since the reset. Only the rows the probe kept (the
first by total time) are compared: a type or user outside them is not named."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from hyperpod_ha.controllers.models import ControllerReport, LoadEvidence
from hyperpod_ha.early_warning.models import (
    ACTIVE,
    NAMED_ROWS,
    SAMPLE_ROWS,
    STANDBY,
    ControllerFigures,
    Judged,
    RpcLoad,
    Sample,
)

Rows = Mapping[str, tuple[int, int]]


def controller_figures(
    verdict: Judged, reports: Sequence[ControllerReport], previous: Sample | None
) -> tuple[tuple[ControllerFigures, ...], Sample | None]:
    """The figures of every checked controller (the active one first), and this check's sample."""
    by_instance = {report.instance_id: report for report in reports if report.checked}
    found: list[ControllerFigures] = []
    sample: Sample | None = None
    for key, entry in verdict.evidence.items():
        report = by_instance.get(str(entry.get("instance_id")))
        if report is None:
            continue
        local = _local(key, report, ACTIVE if entry.get("active") is True else STANDBY)
        if not local.active:
            found.append(local)
            continue
        sample = _sample(key, report.load)
        found.insert(0, _active(local, report.load, sample, previous))
    return tuple(found), sample


def _local(key: str, report: ControllerReport, role: str) -> ControllerFigures:
    """What every controller's own node tells, whatever its role."""
    return ControllerFigures(
        controller=key,
        role=role,
        instance_id=report.instance_id,
        slurmctld_threads=report.slurmctld.threads,
        round_trip_ms=report.load.sdiag_ms,
        ping_ms=report.load.ping_ms,
        heartbeat_lag_seconds=report.heartbeat.age_seconds,
        state_save_write_ms=report.load.state_save_write_ms,
        slurmdbd_answers=report.dbd.reachable,
    )


def _sample(key: str, load: LoadEvidence) -> Sample | None:
    if load.sampled_at is None:
        return None
    return Sample(
        controller=key,
        at=load.sampled_at,
        since=load.since,
        dbd_agent_queue=load.dbd_agent_queue,
        types={row.name: (row.count, row.total_us) for row in load.rpc_types[:SAMPLE_ROWS]},
        users={row.name: (row.count, row.total_us) for row in load.rpc_users[:SAMPLE_ROWS]},
    )


def _active(
    local: ControllerFigures, load: LoadEvidence, sample: Sample | None, previous: Sample | None
) -> ControllerFigures:
    """The active controller's: sdiag's figures, and over the window since ``previous``."""
    if sample is None:
        return dataclasses.replace(local, **_sdiag(load))
    after = previous if previous is not None and previous.controller == sample.controller else None
    after = after if after is not None and sample.at > after.at else None
    counted = after if after is not None and after.since == sample.since else None
    types = _window(sample.types, counted.types if counted else None)
    users = _window(sample.users, counted.users if counted else None)
    calls = sum(row.count for row in types)
    rate = None
    if after is not None and sample.dbd_agent_queue is not None and after.dbd_agent_queue is not None:
        rate = round((sample.dbd_agent_queue - after.dbd_agent_queue) / (sample.at - after.at), 3)
    return dataclasses.replace(
        local,
        **_sdiag(load),
        rpc_average_ms=round(sum(row.count * row.average_ms for row in types) / calls, 1) if calls else None,
        rpc_window_seconds=sample.at - counted.at if counted else None,
        slowest_types=tuple(sorted(types, key=lambda row: -row.average_ms)[:NAMED_ROWS]),
        busiest_users=tuple(sorted(users, key=lambda row: -row.count)[:NAMED_ROWS]),
        dbd_queue_rate=rate,
    )


def _sdiag(load: LoadEvidence) -> dict[str, Any]:
    return {
        "server_threads": load.server_threads,
        "agent_queue": load.agent_queue,
        "agent_count": load.agent_count,
        "dbd_agent_queue": load.dbd_agent_queue,
        "max_dbd_msgs": load.max_dbd_msgs,
        "main_cycle_last_ms": _ms(load.main_cycle_last_us),
        "backfill_cycle_last_ms": _ms(load.backfill_cycle_last_us),
    }


def _window(now: Rows, before: Rows | None) -> list[RpcLoad]:
    """Each row's calls and average over the window; since the reset without ``before``."""
    found = []
    for name, (count_now, total_now) in now.items():
        if before is not None and name not in before:
            continue  # not among the rows kept last time: its calls in the window unknown
        count, total = count_now, total_now
        if before is not None:
            count, total = count_now - before[name][0], total_now - before[name][1]
        if count > 0 and total >= 0:
            found.append(RpcLoad(name, count, round(total / count / 1000, 1)))
    return found


def _ms(microseconds: int | None) -> float | None:
    return None if microseconds is None else round(microseconds / 1000, 1)
