"""The verdict's cases of who is active: takeovers, split brains, partitions, nobody active or checked."""

from __future__ import annotations

from hyperpod_ha.verdict import DEGRADED, DOWN, FAILED_OVER, HEALTHY, SPLIT_BRAIN, UNKNOWN
from hyperpod_ha.verdict.reasons import ReasonCode
from tests.unit.verdict.cases.verdict_probes import (
    CTL1_KILLED,
    CTL2_TOOK_OVER,
    STANDBY,
    Case,
    Probe,
    Unreachable,
    ping_of_three,
    three_controllers,
)

TAKEOVER_CASES = [
    Case(
        "all up: ctl1 active, the standby backup answers ping UP and stays standby",
        (Probe(), STANDBY),
        HEALTHY,
        "ctl1",
        (
            (
                ReasonCode.PRIMARY_ACTIVE,
                "ctl1 (configured primary) is active: logged 'Running as primary controller'",
            ),
            (ReasonCode.PRIMARY_ACTIVE, "writes the heartbeat"),
            (
                ReasonCode.CONTROLLER_STATE,
                "ctl2: slurmctld running, logged 'slurmctld running in background mode' (standby)",
            ),
        ),
    ),
    Case(
        "killed primary, backup took over (04)",
        (CTL1_KILLED, CTL2_TOOK_OVER),
        FAILED_OVER,
        "ctl2",
        (
            (ReasonCode.BACKUP_TOOK_OVER, "ctl2 (SlurmctldHost[1]) took over from ctl1"),
            (ReasonCode.STANDBY_DOWN, "ctl1 (the configured primary): slurmctld not running"),
        ),
    ),
    Case(
        "no role line anywhere: the heartbeat's writer index says ctl1 is active",
        (Probe(log=None), Probe(name="ctl2", log=None)),
        HEALTHY,
        "ctl1",
        ((ReasonCode.PRIMARY_ACTIVE, "writes the heartbeat (last beat 1 s ago)"),),
    ),
    Case(
        "no role line anywhere: the heartbeat's writer index says ctl2 took over",
        (
            Probe(
                log=None,
                slurmctld=None,
                ping="ping_primary_down.txt",
                heartbeat=(1, 2),
                dbd="sacctmgr_cluster_ctl2.txt",
            ),
            Probe(
                name="ctl2",
                log=None,
                ping="ping_primary_down.txt",
                heartbeat=(1, 2),
                dbd="sacctmgr_cluster_ctl2.txt",
            ),
        ),
        FAILED_OVER,
        "ctl2",
        (
            (
                ReasonCode.BACKUP_TOOK_OVER,
                "ctl2 (SlurmctldHost[1]) took over from ctl1: writes the heartbeat (last beat 2 s ago)",
            ),
        ),
    ),
    Case(
        "hung primary (stopped, ping DOWN), before SlurmctldTimeout: nobody is active yet",
        (
            Probe(slurmctld="T", ping=None, heartbeat=(0, 8)),
            Probe(
                name="ctl2",
                log="slurmctld_log_ctl2_standby.txt",
                ping="ping_primary_down.txt",
                heartbeat=(0, 8),
            ),
        ),
        DOWN,
        None,
        (
            (
                ReasonCode.HEARTBEAT_HOLDER_HUNG,
                "ctl1 still holds the heartbeat (last beat 8 s ago) but its slurmctld does not answer",
            ),
            (ReasonCode.HEARTBEAT_HOLDER_HUNG, "SlurmctldTimeout (10 s)"),
        ),
    ),
    Case(
        "hung primary still running (deadlocked): ping DOWN everywhere, nobody active yet",
        (
            Probe(ping="ping_primary_down.txt", heartbeat=(0, 9)),
            Probe(
                name="ctl2",
                log="slurmctld_log_ctl2_standby.txt",
                ping="ping_primary_down.txt",
                heartbeat=(0, 9),
            ),
        ),
        DOWN,
        None,
        ((ReasonCode.HEARTBEAT_HOLDER_HUNG, "ctl1 still holds the heartbeat"),),
    ),
    Case(
        "hung primary, backup took over after SlurmctldTimeout",
        (Probe(slurmctld="T", ping=None, heartbeat=(1, 1), dbd="sacctmgr_cluster_ctl2.txt"), CTL2_TOOK_OVER),
        FAILED_OVER,
        "ctl2",
        (
            (
                ReasonCode.STANDBY_DOWN,
                "ctl1: slurmctld stopped (process state T): the old primary asks for control back",
            ),
        ),
    ),
    Case(
        "the old primary wakes up: both act as primary for a moment",
        (Probe(heartbeat=(0, 0)), CTL2_TOOK_OVER),
        SPLIT_BRAIN,
        None,
        (
            (ReasonCode.SEVERAL_ACTIVE, "2 controllers act as the active one"),
            (ReasonCode.ACTIVE_CONTROLLER, "ctl1 is active"),
            (ReasonCode.ACTIVE_CONTROLLER, "ctl2 is active"),
        ),
    ),
    Case(
        "the old primary took control back (05): ctl2 is standby again",
        (
            Probe(log="slurmctld_log_ctl1_restart.txt"),
            Probe(name="ctl2", log="slurmctld_log_ctl2_control_back.txt"),
        ),
        HEALTHY,
        "ctl1",
        (),
    ),
    Case(
        "scontrol takeover (06): the primary saved its state and exited, ctl2 is active",
        (
            Probe(
                log="slurmctld_log_ctl1_takeover_shutdown.txt",
                slurmctld=None,
                ping="ping_primary_down.txt",
                heartbeat=(1, 1),
            ),
            Probe(
                name="ctl2",
                log="slurmctld_log_ctl2_takeover_requested.txt",
                ping="ping_primary_down.txt",
                heartbeat=(1, 1),
                dbd="sacctmgr_cluster_ctl2.txt",
            ),
        ),
        FAILED_OVER,
        "ctl2",
        (),
    ),
    Case(
        "primary cut off, unreachable by SSM too: fresh heartbeat, the backup stays standby (10)",
        (
            Unreachable("ctl1"),
            Probe(
                name="ctl2",
                log="slurmctld_log_ctl2_standby.txt",
                ping="ping_primary_down.txt",
                sinfo="sinfo_standby_mode.txt",
                sinfo_rc=1,
            ),
        ),
        DOWN,
        None,
        (
            (
                ReasonCode.HEARTBEAT_HOLDER_UNREACHABLE,
                "ctl1 writes the heartbeat (last beat 1 s ago) but no checked controller reaches it",
            ),
            (ReasonCode.HEARTBEAT_HOLDER_UNREACHABLE, "network partition?"),
        ),
    ),
    Case(
        "primary cut off from the other controller, both checked (10): not verified",
        (
            Probe(
                ping="Slurmctld(primary) at ctl1 is UP\nSlurmctld(backup) at ctl2 is DOWN",
                sinfo="sinfo_down_not_responding.txt",
            ),
            Probe(
                name="ctl2",
                log="slurmctld_log_ctl2_standby.txt",
                ping="ping_primary_down.txt",
                sinfo="sinfo_standby_mode.txt",
                sinfo_rc=1,
            ),
        ),
        DEGRADED,
        "ctl1",
        (
            (ReasonCode.STANDBY_CANNOT_REACH_ACTIVE, "ctl2 cannot reach the active controller ctl1"),
            (
                ReasonCode.SINFO_FAILS,
                "ctl2: sinfo: slurm_load_partitions: Slurm backup controller in standby mode",
            ),
            (ReasonCode.STANDBY_NOT_ANSWERING_PING, "standby ctl2 does not answer ping from ctl1"),
        ),
    ),
    Case(
        "two controllers both claiming to be active, each read its own heartbeat",
        (
            Probe(heartbeat=(0, 0)),
            Probe(name="ctl2", log="slurmctld_log_ctl2_takeover.txt", heartbeat=(1, 0)),
        ),
        SPLIT_BRAIN,
        None,
        ((ReasonCode.HEARTBEAT_SEVERAL_WRITERS, "heartbeat written by ctl1 and ctl2 within moments"),),
    ),
    Case(
        "three controllers: primary active, backup1 and backup2 standby",
        (
            Probe(config=three_controllers(), ping=ping_of_three(True, True, True)),
            Probe(
                name="ctl2",
                config=three_controllers(),
                ping=ping_of_three(True, True, True),
                log="slurmctld_log_ctl2_standby.txt",
            ),
            Probe(
                name="ctl3",
                config=three_controllers(),
                ping=ping_of_three(True, True, True),
                log="slurmctld_log_ctl2_standby.txt",
            ),
        ),
        HEALTHY,
        "ctl1",
        (
            (ReasonCode.CONTROLLER_STATE, "ctl2: slurmctld running"),
            (ReasonCode.CONTROLLER_STATE, "ctl3: slurmctld running"),
        ),
    ),
    Case(
        "three controllers: backup2 took over, backup1 stays standby",
        (
            Probe(
                config=three_controllers(),
                slurmctld=None,
                ping=ping_of_three(False, True, True),
                heartbeat=(2, 1),
            ),
            Probe(
                name="ctl2",
                config=three_controllers(),
                ping=ping_of_three(False, True, True),
                log="slurmctld_log_ctl2_standby.txt",
                heartbeat=(2, 1),
            ),
            Probe(
                name="ctl3",
                config=three_controllers(),
                ping=ping_of_three(False, True, True),
                log="slurmctld_log_ctl2_takeover.txt",
                heartbeat=(2, 1),
                dbd="lab|10.214.0.13|6817",
            ),
        ),
        FAILED_OVER,
        "ctl3",
        ((ReasonCode.BACKUP_TOOK_OVER, "ctl3 (SlurmctldHost[2]) took over from ctl1"),),
    ),
    Case(
        "the old primary unreachable by SSM after the failover",
        (Unreachable("ctl1"), CTL2_TOOK_OVER),
        FAILED_OVER,
        "ctl2",
        ((ReasonCode.STANDBY_DOWN, "ctl1 (the configured primary) is not active: TargetUnreachable"),),
    ),
    Case(
        "the active primary unreachable by SSM: heartbeat and ping say it serves, but it is unchecked",
        (Unreachable("ctl1"), STANDBY),
        DEGRADED,
        "ctl1",
        (
            (
                ReasonCode.ACTIVE_NOT_CHECKED,
                "the active controller ctl1 could not be checked (TargetUnreachable",
            ),
        ),
    ),
    Case(
        "both controllers down (07)",
        (
            Probe(
                slurmctld=None,
                ping="ping_both_down.txt",
                ping_rc=1,
                heartbeat=(0, 60),
                sinfo="sinfo_connect_failure.txt",
                sinfo_rc=1,
            ),
            Probe(
                name="ctl2",
                slurmctld=None,
                log="slurmctld_log_ctl2_standby.txt",
                ping="ping_both_down.txt",
                ping_rc=1,
                heartbeat=(0, 60),
                sinfo="sinfo_connect_failure.txt",
                sinfo_rc=1,
            ),
        ),
        DOWN,
        None,
        (
            (ReasonCode.NO_ACTIVE_CONTROLLER, "no controller is active"),
            (ReasonCode.HEARTBEAT_NOT_WRITTEN, "nobody writes the heartbeat: last beat 1 min ago by ctl1"),
        ),
    ),
    Case(
        "no controller could be checked",
        (Unreachable("ctl1"), Unreachable("ctl2")),
        UNKNOWN,
        None,
        (
            (ReasonCode.NO_CONTROLLER_CHECKED, "no controller could be checked"),
            (ReasonCode.CONTROLLER_STATE, "ip-10-214-0-11: unreachable: TargetUnreachable"),
        ),
    ),
]
