"""The verdict's cases of a serving cluster that lacks something: accounting, state, heartbeat, standbys."""

from __future__ import annotations

from hyperpod_ha.verdict import DEGRADED, HEALTHY, VerdictPolicy
from hyperpod_ha.verdict.reasons import ReasonCode
from tests.unit.verdict.cases.verdict_probes import (
    CTL2_TOOK_OVER,
    STANDBY,
    STATE,
    Case,
    Probe,
    Unreachable,
    capture,
)

DEGRADED_CASES = [
    Case(
        "slurmdbd down while scheduling works (08)",
        (
            Probe(dbd="sacctmgr_cluster_refused.txt", dbd_rc=1, sdiag="sdiag_dbd_queue_growing.txt"),
            Probe(
                name="ctl2",
                log="slurmctld_log_ctl2_standby.txt",
                dbd="sacctmgr_cluster_refused.txt",
                dbd_rc=1,
            ),
        ),
        DEGRADED,
        "ctl1",
        (
            (ReasonCode.SLURMDBD_NOT_ANSWERING, "slurmdbd does not answer"),
            (ReasonCode.SLURMDBD_NOT_ANSWERING, "Connection refused"),
            (ReasonCode.SLURMDBD_NOT_ANSWERING, "3 accounting records wait"),
        ),
    ),
    Case(
        "slurmdbd refuses its database password (09)",
        (
            Probe(dbd="sacctmgr_cluster_db_access_denied.txt", dbd_rc=1),
            Probe(
                name="ctl2",
                log="slurmctld_log_ctl2_standby.txt",
                dbd="sacctmgr_cluster_db_access_denied.txt",
                dbd_rc=1,
            ),
        ),
        DEGRADED,
        "ctl1",
        ((ReasonCode.SLURMDBD_NOT_ANSWERING, "Unable to connect to database"),),
    ),
    Case(
        "StateSaveLocation unwritable on the active controller",
        (Probe(writable=False), STANDBY),
        DEGRADED,
        "ctl1",
        (
            (
                ReasonCode.STATE_SAVE_NOT_WRITABLE,
                f"ctl1: StateSaveLocation {STATE} is not writable (Read-only file system)",
            ),
        ),
    ),
    Case(
        "StateSaveLocation check hangs on the standby",
        (Probe(), Probe(name="ctl2", log="slurmctld_log_ctl2_standby.txt", writable=None)),
        DEGRADED,
        "ctl1",
        ((ReasonCode.STATE_SAVE_ERROR, "ctl2: StateSaveLocation check: timed out creating a file"),),
    ),
    Case(
        "the controllers see StateSaveLocation on different file systems",
        (Probe(), Probe(name="ctl2", log="slurmctld_log_ctl2_standby.txt", fstype="ext4")),
        DEGRADED,
        "ctl1",
        ((ReasonCode.STATE_SAVE_FILESYSTEMS_DIFFER, "different file systems: ext4 on ctl2; lustre on ctl1"),),
    ),
    Case(
        "StateSaveLocation is not on the expected file system type",
        (Probe(fstype="ext4"), Probe(name="ctl2", log="slurmctld_log_ctl2_standby.txt", fstype="ext4")),
        DEGRADED,
        "ctl1",
        ((ReasonCode.STATE_SAVE_FILESYSTEM, "StateSaveLocation is on ext4, expected lustre"),),
        VerdictPolicy(expected_state_fstypes=frozenset({"lustre"})),
    ),
    Case(
        "the heartbeat cannot be read on the standby",
        (Probe(), Probe(name="ctl2", log="slurmctld_log_ctl2_standby.txt", heartbeat="timeout")),
        DEGRADED,
        "ctl1",
        (
            (ReasonCode.HEARTBEAT_UNREADABLE, "ctl2: heartbeat: timed out"),
            (ReasonCode.HEARTBEAT_UNREADABLE, "could not take over"),
        ),
    ),
    Case(
        "the active controller does not write the heartbeat",
        (
            Probe(heartbeat=(0, 90)),
            Probe(name="ctl2", log="slurmctld_log_ctl2_standby.txt", heartbeat=(0, 90)),
        ),
        DEGRADED,
        "ctl1",
        (
            (
                ReasonCode.HEARTBEAT_NOT_WRITTEN,
                "the active controller does not write the heartbeat: last beat 1 min 30 s ago by ctl1",
            ),
        ),
    ),
    Case(
        "slurmdbd has the other controller registered",
        (Probe(dbd="sacctmgr_cluster_ctl2.txt"), STANDBY),
        DEGRADED,
        "ctl1",
        (
            (
                ReasonCode.SLURMDBD_OTHER_CONTROLLER,
                "slurmdbd has ctl2 (10.214.0.12) registered as the controller, but ctl1 is active",
            ),
        ),
    ),
    Case(
        "no controller registered with slurmdbd",
        (Probe(dbd="sacctmgr_cluster_none.txt"), STANDBY),
        DEGRADED,
        "ctl1",
        ((ReasonCode.SLURMDBD_NO_CONTROLLER, "no controller is registered with slurmdbd"),),
    ),
    Case(
        "a backup in the middle of taking over while the primary is active",
        (Probe(), Probe(name="ctl2", log="slurmctld_log_ctl1_takeover_shutdown.txt")),
        DEGRADED,
        "ctl1",
        (
            (ReasonCode.STANDBY_IN_FLUX, "ctl2: slurmctld running, logged a terminate signal last"),
            (ReasonCode.STANDBY_IN_FLUX, "answers ping while ctl1 is active"),
        ),
    ),
    Case(
        "the old primary restarting while the backup is active: starting, not hung (seen in the lab)",
        (
            # 05 at T0+1 s: ctl1 logged its start only; ping shows it DOWN, ctl2 still in control
            Probe(
                log=capture("slurmctld_log_ctl1_restart.txt").splitlines()[0],
                ping="ping_primary_down.txt",
                heartbeat=(1, 1),
                dbd="sacctmgr_cluster_ctl2.txt",
            ),
            CTL2_TOOK_OVER,
        ),
        DEGRADED,
        "ctl2",
        (
            (ReasonCode.STANDBY_IN_FLUX, "ctl1: slurmctld running, logged a start but no role yet"),
            (ReasonCode.STANDBY_IN_FLUX, "does not answer ping while ctl2 is active"),
        ),
    ),
    # A dead standby alone is no DEGRADED verdict: the verdict's redundancy says it (none here).
    Case(
        "standby slurmctld not running",
        (
            Probe(ping="Slurmctld(primary) at ctl1 is UP\nSlurmctld(backup) at ctl2 is DOWN"),
            Probe(name="ctl2", slurmctld=None, log="slurmctld_log_ctl2_standby.txt"),
        ),
        HEALTHY,
        "ctl1",
        (
            (ReasonCode.STANDBY_DOWN, "standby ctl2: slurmctld not running"),
            (ReasonCode.NO_READY_STANDBY, "no standby is ready: one more failure stops the cluster"),
        ),
    ),
    Case(
        "a standby unreachable by SSM that answers ping",
        (Probe(), Unreachable("ctl2")),
        HEALTHY,
        "ctl1",
        ((ReasonCode.STANDBY_UNCHECKED, "ctl2 could not be checked (TargetUnreachable) but answers ping"),),
    ),
    Case(
        "a standby unreachable by SSM that does not answer ping",
        (
            Probe(ping="Slurmctld(primary) at ctl1 is UP\nSlurmctld(backup) at ctl2 is DOWN"),
            Unreachable("ctl2"),
        ),
        HEALTHY,
        "ctl1",
        (
            (ReasonCode.STANDBY_DOWN, "standby ctl2 could not be checked (TargetUnreachable"),
            (ReasonCode.NO_READY_STANDBY, "no standby is ready"),
        ),
    ),
]
