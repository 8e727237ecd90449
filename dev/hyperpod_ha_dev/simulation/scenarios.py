"""The scenarios: what each controller shows, check after check, and what must come out.

Every text a controller shows is real output captured from a Slurm 22.05 controller pair
(``hyperpod_ha_dev/captures``): ctl1 (10.214.0.11) is the first SlurmctldHost, ctl2
(10.214.0.12) the backup, as in the lab that produced the captures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from hyperpod_ha.verdict.reasons import ReasonCode
from hyperpod_ha_dev.simulation.fake_controller import ControllerIdentity, ControllerState

CTL1 = ControllerIdentity("ctl1", "10.214.0.11")
CTL2 = ControllerIdentity("ctl2", "10.214.0.12")
CTL1_INSTANCE = "i-0a1b2c3d4e5f60001"
CTL2_INSTANCE = "i-0a1b2c3d4e5f60002"

# --- what a controller can show --------------------------------------------------------
PRIMARY = ControllerState()
STANDBY = ControllerState(log="slurmctld_log_ctl2_standby.txt")
# SIGKILL of ctl1's slurmctld; ctl2 took over after SlurmctldTimeout (capture 04).
_AFTER_FAILOVER = {
    "ping": "ping_primary_down.txt",
    "heartbeat_writer": 1,
    "sacctmgr": "sacctmgr_cluster_ctl2.txt",
    "sinfo": "sinfo_mixed_idle.txt",
}
KILLED_PRIMARY = ControllerState(slurmctld="stopped", **_AFTER_FAILOVER)  # type: ignore[arg-type]
TOOK_OVER = ControllerState(log="slurmctld_log_ctl2_takeover.txt", **_AFTER_FAILOVER)  # type: ignore[arg-type]
# Within SlurmctldTimeout of the kill: the primary is gone, the backup still in standby.
_IN_PROGRESS = {"ping": "ping_primary_down.txt", "heartbeat_age_seconds": 6}
KILLED_PRIMARY_EARLY = ControllerState(slurmctld="stopped", **_IN_PROGRESS)  # type: ignore[arg-type]
STANDBY_EARLY = ControllerState(log="slurmctld_log_ctl2_standby.txt", **_IN_PROGRESS)  # type: ignore[arg-type]
# ctl1 started again and took control back (capture 05).
RESTARTED_PRIMARY = ControllerState(log="slurmctld_log_ctl1_restart.txt")
BACK_TO_STANDBY = ControllerState(log="slurmctld_log_ctl2_control_back.txt")
# Both slurmctld stopped (capture 07): nothing answers, the heartbeat goes stale.
_BOTH_DOWN = {
    "slurmctld": "stopped",
    "ping": "ping_both_down.txt",
    "ping_rc": 1,
    "show_config_answers": False,
    "heartbeat_age_seconds": 300,
    "sacctmgr": "sacctmgr_cluster_none.txt",
    "sinfo": "sinfo_connect_failure.txt",
    "sinfo_rc": 1,
}
DOWN_PRIMARY = ControllerState(**_BOTH_DOWN)  # type: ignore[arg-type]
DOWN_BACKUP = ControllerState(log="slurmctld_log_ctl2_standby.txt", **_BOTH_DOWN)  # type: ignore[arg-type]
# ctl2 claims control while ctl1 still runs as primary.
SECOND_PRIMARY = ControllerState(log="slurmctld_log_ctl2_takeover.txt")
# slurmdbd stopped: scheduling goes on, accounting refuses (capture 08).
_DBD_DOWN = {"sacctmgr": "sacctmgr_cluster_refused.txt", "sacctmgr_rc": 1, "dbd_queue": 3}
PRIMARY_DBD_DOWN = ControllerState(**_DBD_DOWN)  # type: ignore[arg-type]
STANDBY_DBD_DOWN = ControllerState(log="slurmctld_log_ctl2_standby.txt", **_DBD_DOWN)  # type: ignore[arg-type]
UNREACHABLE = ControllerState(reachable=False)
# ctl2's slurmctld killed while ctl1 serves (HEALTHY, no ready standby): ctl1's ping sees it down.
STANDBY_KILLED = ControllerState(slurmctld="stopped", log="slurmctld_log_ctl2_standby.txt")
PRIMARY_BACKUP_DOWN = ControllerState(ping="ping_backup_down.txt")
# Drift that breaks the next failover (verdict.drift): a controller's own slurm.conf, programs,
# version. ctl2's slurm.conf a local copy with one value changed, as `sed -i` on the link makes it.
STANDBY_CONF_DRIFT = ControllerState(
    log="slurmctld_log_ctl2_standby.txt",
    slurm_conf="local",
    conf_changes=(("SlurmctldTimeout", ("20",)),),
)
# ctl1 runs, and its slurm.conf is, without SlurmctldPrimaryOnProg/OffProg (the anchor line was missing).
PRIMARY_NOTIFICATIONS_OFF = ControllerState(
    slurm_conf="local",
    conf_changes=(("SlurmctldPrimaryOnProg", ()), ("SlurmctldPrimaryOffProg", ())),
    running_programs=False,
)
STANDBY_PROGRAMS_NOT_EXECUTABLE = ControllerState(
    log="slurmctld_log_ctl2_standby.txt", programs="not_executable"
)
STANDBY_OTHER_VERSION = ControllerState(log="slurmctld_log_ctl2_standby.txt", slurm_version="24.11.5")
# ctl2's local copy lists the controllers in another order, with another StateSaveLocation.
STANDBY_OTHER_HOSTS = ControllerState(
    log="slurmctld_log_ctl2_standby.txt",
    slurm_conf="local",
    conf_changes=(
        ("SlurmctldHost", ("ctl2(10.214.0.12)", "ctl1(10.214.0.11)")),
        ("StateSaveLocation", ("/var/spool/slurmctld",)),
    ),
)
# After a failover: the new active controller's slurm.conf is a local copy.
TOOK_OVER_LOCAL_COPY = ControllerState(
    log="slurmctld_log_ctl2_takeover.txt",
    slurm_conf="local",
    **_AFTER_FAILOVER,  # type: ignore[arg-type]
)

TriggerKind = Literal["notification", "duplicate-storm", "watchdog"]


@dataclass(frozen=True)
class Scenario:
    name: str
    summary: str
    ctl1: tuple[ControllerState, ...]
    ctl2: tuple[ControllerState, ...]
    notification: str  # the SNS message the lifecycle scripts would publish ("" for none)
    expect_verdict: str
    expect_incidents: int
    expect_snapshots: int = 1
    expect_executions: int = 1
    trigger: TriggerKind = "notification"
    node_events: int = 0
    parameters: dict[str, int | str] = field(default_factory=dict)
    expect_codes: tuple[ReasonCode, ...] = ()  # each one a code of the final verdict's reasons


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "healthy",
            "a restart notification; both controllers fine",
            (PRIMARY,),
            (STANDBY,),
            "Slurm Controller is ON, (10.214.0.11, Primary Node)",
            "HEALTHY",
            0,
        ),
        Scenario(
            "failover",
            "ctl1's slurmctld killed; ctl2 took over",
            (KILLED_PRIMARY,),
            (TOOK_OVER,),
            "Slurm Controller is ON, (10.214.0.12, Primary Node)",
            "FAILED_OVER",
            0,
        ),
        Scenario(
            "both-down",
            "both slurmctld stopped",
            (DOWN_PRIMARY,),
            (DOWN_BACKUP,),
            "Slurm Controller is OFF (10.214.0.11, Primary Node)",
            "DOWN",
            1,
        ),
        Scenario(
            "split-brain",
            "ctl2 runs as primary while ctl1 still does",
            (PRIMARY,),
            (SECOND_PRIMARY,),
            "Slurm Controller is ON, (10.214.0.12, Primary Node)",
            "SPLIT_BRAIN",
            1,
        ),
        Scenario(
            "slurmdbd-down",
            "slurmdbd stopped; scheduling goes on",
            (PRIMARY_DBD_DOWN,),
            (STANDBY_DBD_DOWN,),
            "Slurm Controller is ON, (10.214.0.11, Primary Node)",
            "DEGRADED",
            1,
        ),
        Scenario(
            "unreachable",
            "SSM reaches no controller",
            (UNREACHABLE,),
            (UNREACHABLE,),
            "Slurm Controller is OFF (10.214.0.11, Primary Node)",
            "UNKNOWN",
            1,
        ),
        Scenario(
            "flapping",
            "ctl1 down at the first check, back at the second",
            (KILLED_PRIMARY_EARLY, RESTARTED_PRIMARY),
            (STANDBY_EARLY, BACK_TO_STANDBY),
            "Slurm Controller is OFF (10.214.0.11, Primary Node)",
            "HEALTHY",
            0,
        ),
        Scenario(
            "duplicate-storm",
            "the failover notification three times and 20 controller node events",
            (KILLED_PRIMARY,),
            (TOOK_OVER,),
            "Slurm Controller is ON, (10.214.0.12, Primary Node)",
            "FAILED_OVER",
            0,
            trigger="duplicate-storm",
            node_events=20,
            # The storm arrives while the run is active (held 5 s before its first check).
            parameters={"SettleSeconds": 5},
        ),
        Scenario(
            "drift-local-copy",
            "ctl2's slurm.conf a local copy with SlurmctldTimeout changed (sed -i on the link)",
            (PRIMARY,),
            (STANDBY_CONF_DRIFT,),
            "Slurm Controller is ON, (10.214.0.11, Primary Node)",
            "DEGRADED",
            1,
            expect_codes=(
                ReasonCode.SLURM_CONF_LOCAL_COPY,
                ReasonCode.SLURM_CONF_DIFFERS,
                ReasonCode.SLURMCTLD_TIMEOUT_DIFFERS,
            ),
        ),
        Scenario(
            "drift-notifications-off",
            "ctl1 runs without SlurmctldPrimaryOnProg/OffProg: the failover topic stays silent",
            (PRIMARY_NOTIFICATIONS_OFF,),
            (STANDBY,),
            "Slurm Controller is ON, (10.214.0.11, Primary Node)",
            "DEGRADED",
            1,
            expect_codes=(ReasonCode.NOTIFICATIONS_OFF,),
        ),
        Scenario(
            "drift-programs",
            "the ON/OFF programs are not executable as ctl2 sees them",
            (PRIMARY,),
            (STANDBY_PROGRAMS_NOT_EXECUTABLE,),
            "Slurm Controller is ON, (10.214.0.11, Primary Node)",
            "DEGRADED",
            1,
            expect_codes=(ReasonCode.NOTIFICATION_PROGRAM_BROKEN,),
        ),
        Scenario(
            "drift-version",
            "ctl2's slurmctld is another Slurm version",
            (PRIMARY,),
            (STANDBY_OTHER_VERSION,),
            "Slurm Controller is ON, (10.214.0.11, Primary Node)",
            "DEGRADED",
            1,
            expect_codes=(ReasonCode.SLURM_VERSION_DIFFERS,),
        ),
        Scenario(
            "drift-controllers",
            "ctl2's slurm.conf lists the controllers in another order and another StateSaveLocation",
            (PRIMARY,),
            (STANDBY_OTHER_HOSTS,),
            "Slurm Controller is ON, (10.214.0.11, Primary Node)",
            "DEGRADED",
            1,
            expect_codes=(ReasonCode.SLURMCTLD_HOSTS_DIFFER, ReasonCode.STATE_SAVE_LOCATION_DIFFERS),
        ),
        Scenario(
            "drift-after-failover",
            "ctl2 took over, and its slurm.conf is a local copy: DEGRADED, not FAILED_OVER",
            (KILLED_PRIMARY,),
            (TOOK_OVER_LOCAL_COPY,),
            "Slurm Controller is ON, (10.214.0.12, Primary Node)",
            "DEGRADED",
            1,
            expect_codes=(ReasonCode.SLURM_CONF_LOCAL_COPY,),
        ),
        Scenario(
            "silent-failure",
            "both slurmctld stopped and nothing published; the watchdog's next tick finds it",
            (DOWN_PRIMARY,),
            (DOWN_BACKUP,),
            "",
            "DOWN",
            1,
            trigger="watchdog",
        ),
    )
}
