"""Redundancy's cases: which controllers are ready standbys, on two and three controllers, and
the verdict that goes with it (a dead standby alone no longer makes a cluster DEGRADED)."""

from __future__ import annotations

from dataclasses import dataclass

from hyperpod_ha.verdict import DEGRADED, DOWN, FAILED_OVER, HEALTHY, SPLIT_BRAIN, VerdictName
from tests.unit.verdict.cases.verdict_probes import (
    CTL1_KILLED,
    CTL2_TOOK_OVER,
    STANDBY,
    Probe,
    Unreachable,
    ping_of_three,
    three_controllers,
)

PING_CTL2_DOWN = "Slurmctld(primary) at ctl1 is UP\nSlurmctld(backup) at ctl2 is DOWN"
_STANDBY_LOG = "slurmctld_log_ctl2_standby.txt"


def three(name: str, up: tuple[bool, bool, bool], **probe: object) -> Probe:
    """One of three controllers seeing ``up`` in ping; a standby's log unless told."""
    fields: dict[str, object] = {"log": _STANDBY_LOG, **probe} if name != "ctl1" else dict(probe)
    return Probe(name=name, config=three_controllers(), ping=ping_of_three(*up), **fields)  # type: ignore[arg-type]


@dataclass(frozen=True)
class RedundancyCase:
    id: str
    controllers: tuple[Probe | Unreachable, ...]
    verdict: VerdictName
    redundancy: str
    standbys: tuple[str, ...]
    not_ready: dict[str, str]  # name -> words its reason contains


_UP3 = (True, True, True)
_CTL3_DOWN = (True, True, False)
_BACKUPS_DOWN = (True, False, False)

REDUNDANCY_CASES = [
    # --- two controllers
    RedundancyCase("2: all up", (Probe(), STANDBY), HEALTHY, "full", ("ctl2",), {}),
    RedundancyCase(
        "2: standby killed: HEALTHY, nothing left",
        (
            Probe(ping=PING_CTL2_DOWN),
            Probe(name="ctl2", slurmctld=None, log=_STANDBY_LOG, ping=PING_CTL2_DOWN),
        ),
        HEALTHY,
        "none",
        (),
        {"ctl2": "slurmctld not running"},
    ),
    RedundancyCase(
        "2: standby stopped (SIGSTOP)",
        (
            Probe(ping=PING_CTL2_DOWN),
            Probe(name="ctl2", slurmctld="T", log=_STANDBY_LOG, ping=PING_CTL2_DOWN),
        ),
        HEALTHY,
        "none",
        (),
        {"ctl2": "slurmctld stopped (process state T)"},
    ),
    RedundancyCase(
        "2: standby unreachable by SSM and silent to ping",
        (Probe(ping=PING_CTL2_DOWN), Unreachable("ctl2")),
        HEALTHY,
        "none",
        (),
        {"ctl2": "does not answer ping"},
    ),
    RedundancyCase(
        "2: standby unreachable by SSM but answering ping: unknown, not none",
        (Probe(), Unreachable("ctl2")),
        HEALTHY,
        "unknown",
        (),
        {"ctl2": "but answers ping"},
    ),
    RedundancyCase(
        "2: standby with no role line: unknown",
        (Probe(), Probe(name="ctl2", log=None)),
        HEALTHY,
        "unknown",
        (),
        {"ctl2": "no role line"},
    ),
    RedundancyCase(
        "2: standby cannot read the heartbeat: DEGRADED and not ready",
        (Probe(), Probe(name="ctl2", log=_STANDBY_LOG, heartbeat="timeout")),
        DEGRADED,
        "none",
        (),
        {"ctl2": "cannot read the heartbeat"},
    ),
    RedundancyCase(
        "2: primary killed, backup took over: FAILED_OVER with no standby",
        (CTL1_KILLED, CTL2_TOOK_OVER),
        FAILED_OVER,
        "none",
        (),
        {"ctl1": "slurmctld not running"},
    ),
    RedundancyCase(
        "2: old primary unreachable after the failover",
        (Unreachable("ctl1"), CTL2_TOOK_OVER),
        FAILED_OVER,
        "none",
        (),
        {"ctl1": "could not be checked (TargetUnreachable) and does not answer ping"},
    ),
    # --- three controllers
    RedundancyCase(
        "3: all up",
        (three("ctl1", _UP3), three("ctl2", _UP3), three("ctl3", _UP3)),
        HEALTHY,
        "full",
        ("ctl2", "ctl3"),
        {},
    ),
    RedundancyCase(
        "3: backup2 killed: HEALTHY, reduced",
        (three("ctl1", _CTL3_DOWN), three("ctl2", _CTL3_DOWN), three("ctl3", _CTL3_DOWN, slurmctld=None)),
        HEALTHY,
        "reduced",
        ("ctl2",),
        {"ctl3": "slurmctld not running"},
    ),
    RedundancyCase(
        "3: both backups killed: HEALTHY, none",
        (
            three("ctl1", _BACKUPS_DOWN),
            three("ctl2", _BACKUPS_DOWN, slurmctld=None),
            three("ctl3", _BACKUPS_DOWN, slurmctld=None),
        ),
        HEALTHY,
        "none",
        (),
        {"ctl2": "slurmctld not running", "ctl3": "slurmctld not running"},
    ),
    RedundancyCase(
        "3: backup2 took over, backup1 standby, primary dead: FAILED_OVER, reduced",
        (
            three("ctl1", (False, True, True), slurmctld=None, heartbeat=(2, 1)),
            three("ctl2", (False, True, True), heartbeat=(2, 1)),
            three(
                "ctl3",
                (False, True, True),
                log="slurmctld_log_ctl2_takeover.txt",
                heartbeat=(2, 1),
                dbd="lab|10.214.0.13|6817",
            ),
        ),
        FAILED_OVER,
        "reduced",
        ("ctl2",),
        {"ctl1": "slurmctld not running"},
    ),
    RedundancyCase(
        "3: second failover: ctl3 serves, ctl1 and ctl2 dead: FAILED_OVER, none (lab second-failover)",
        (
            three("ctl1", (False, False, True), slurmctld=None, heartbeat=(2, 1)),
            three("ctl2", (False, False, True), slurmctld=None, heartbeat=(2, 1)),
            three(
                "ctl3",
                (False, False, True),
                log="slurmctld_log_ctl2_takeover.txt",
                heartbeat=(2, 1),
                dbd="lab|10.214.0.13|6817",
            ),
        ),
        FAILED_OVER,
        "none",
        (),
        {"ctl1": "slurmctld not running", "ctl2": "slurmctld not running"},
    ),
    # --- no single active controller: unknown
    RedundancyCase(
        "2: both down",
        (
            Probe(slurmctld=None, ping="ping_both_down.txt", ping_rc=1, heartbeat=(0, 60)),
            Probe(name="ctl2", slurmctld=None, log=_STANDBY_LOG, ping="ping_both_down.txt", ping_rc=1),
        ),
        DOWN,
        "unknown",
        (),
        {},
    ),
    RedundancyCase(
        "2: split brain",
        (Probe(), Probe(name="ctl2", log="slurmctld_log_ctl2_takeover.txt", heartbeat=(1, 1))),
        SPLIT_BRAIN,
        "unknown",
        (),
        {},
    ),
]
