"""Reports and verdicts of a cluster whose active controller is ctl1, with given load figures."""

from __future__ import annotations

from hyperpod_ha.controllers.models import (
    ControllerReport,
    DaemonEvidence,
    DbdEvidence,
    HeartbeatEvidence,
    LoadEvidence,
    ReportStatus,
    RpcEvidence,
)
from hyperpod_ha.verdict import HEALTHY, Verdict
from hyperpod_ha.verdict.reasons import Reason, ReasonCode

VERDICT = Verdict(
    HEALTHY,
    (Reason(ReasonCode.PRIMARY_ACTIVE, "ctl1 (the configured primary) is active"),),
    "ctl1",
    "ctl1",
    {
        "ctl1": {"instance_id": "i-01", "target": "t-01", "active": True},
        "ctl2": {"instance_id": "i-02", "target": "t-02", "active": False},
    },
)


def load(
    at: int,
    *,
    threads: int = 3,
    queue: int = 0,
    types: tuple[tuple[str, int, int], ...] = (("REQUEST_JOB_INFO", 100, 50_000),),
    users: tuple[tuple[str, int, int], ...] = (("alice", 100, 50_000),),
    since: int = 1000,
    sdiag_ms: int = 30,
    limit: int = 10_000,
) -> LoadEvidence:
    return LoadEvidence(
        sampled_at=at,
        since=since,
        server_threads=threads,
        agent_queue=0,
        agent_count=0,
        dbd_agent_queue=queue,
        max_dbd_msgs=limit,
        main_cycle_last_us=1500,
        rpc_types=tuple(RpcEvidence(*row) for row in types),
        rpc_users=tuple(RpcEvidence(*row) for row in users),
        sdiag_ms=sdiag_ms,
        ping_ms=12,
        state_save_write_ms=3,
    )


def reports(active: LoadEvidence, *, dbd_answers: bool = True) -> list[ControllerReport]:
    def one(instance: str, load_seen: LoadEvidence) -> ControllerReport:
        return ControllerReport(
            instance_id=instance,
            status=ReportStatus.CHECKED,
            slurmctld=DaemonEvidence(running=True, threads=17),
            heartbeat=HeartbeatEvidence(readable=True, writer_index=0, age_seconds=4),
            dbd=DbdEvidence(reachable=dbd_answers),
            load=load_seen,
        )

    # The standby's sdiag asks the active controller: its figures are not the standby's own.
    return [one("i-01", active), one("i-02", active)]
