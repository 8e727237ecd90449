"""The verdict's cases of drift that breaks the next failover (``verdict.drift``): each names the
controller and the difference; a serving cluster with drift is DEGRADED (after a failover too),
a worse verdict stays what it is."""

from __future__ import annotations

import dataclasses

from hyperpod_ha.verdict import DEGRADED, DOWN, SPLIT_BRAIN
from hyperpod_ha.verdict.reasons import ReasonCode
from tests.unit.verdict.cases.verdict_probes import (
    CONF,
    CTL1_KILLED,
    CTL2_TOOK_OVER,
    PROGRAMS,
    STANDBY,
    STATE,
    Case,
    Conf,
    Probe,
    three_all_up,
)

OFF = "controller status notifications are off on {}: the failover topic will stay silent"


def standby(conf: Conf, **values: object) -> Probe:
    return Probe(name="ctl2", log="slurmctld_log_ctl2_standby.txt", conf=conf, **values)  # type: ignore[arg-type]


DRIFT_CASES = [
    Case(
        "notifications off on the active controller: not in its running configuration nor its slurm.conf",
        (Probe(conf=Conf(programs=False, running_programs=False)), STANDBY),
        DEGRADED,
        "ctl1",
        (
            (
                ReasonCode.NOTIFICATIONS_OFF,
                OFF.format("ctl1") + " (no SlurmctldPrimaryOnProg or SlurmctldPrimaryOffProg in the running "
                "configuration or ctl1's slurm.conf)",
            ),
        ),
    ),
    Case(
        "notifications off in the running configuration only: slurm.conf was fixed, not read yet",
        (Probe(conf=Conf(running_programs=False)), STANDBY),
        DEGRADED,
        "ctl1",
        (
            (
                ReasonCode.NOTIFICATIONS_OFF,
                OFF.format("ctl1")
                + " (no SlurmctldPrimaryOnProg or SlurmctldPrimaryOffProg in the running configuration)",
            ),
        ),
    ),
    Case(
        "notifications off in a standby's slurm.conf: silent once it takes over",
        (Probe(), standby(Conf(programs=False))),
        DEGRADED,
        "ctl1",
        (
            (
                ReasonCode.NOTIFICATIONS_OFF,
                OFF.format("ctl2")
                + " (no SlurmctldPrimaryOnProg or SlurmctldPrimaryOffProg in ctl2's slurm.conf)",
            ),
        ),
    ),
    Case(
        "the ON program missing on a standby",
        (Probe(), standby(Conf(program_state="missing"))),
        DEGRADED,
        "ctl1",
        (
            (
                ReasonCode.NOTIFICATION_PROGRAM_BROKEN,
                f"SlurmctldPrimaryOnProg {PROGRAMS['On']} does not exist on ctl2: "
                "the failover topic will stay silent when ctl2 takes control",
            ),
            (
                ReasonCode.NOTIFICATION_PROGRAM_BROKEN,
                f"SlurmctldPrimaryOffProg {PROGRAMS['Off']} does not exist on ctl2",
            ),
        ),
    ),
    Case(
        "the programs not executable on the active controller",
        (Probe(conf=Conf(program_state="not_executable")), STANDBY),
        DEGRADED,
        "ctl1",
        (
            (
                ReasonCode.NOTIFICATION_PROGRAM_BROKEN,
                f"SlurmctldPrimaryOnProg {PROGRAMS['On']} is not executable on ctl1",
            ),
        ),
    ),
    Case(
        "slurm.conf a local copy on a standby (sed -i on the link), with another hash",
        (Probe(), standby(Conf(link=False, sha256="6" * 64))),
        DEGRADED,
        "ctl1",
        (
            (
                ReasonCode.SLURM_CONF_LOCAL_COPY,
                f"slurm.conf on ctl2 is a local copy: {CONF} is a file, "
                "not a link to the shared copy as on ctl1",
            ),
            (
                ReasonCode.SLURM_CONF_DIFFERS,
                "slurm.conf differs between controllers: sha256 555555555555 on ctl1; "
                "sha256 666666666666 on ctl2",
            ),
        ),
    ),
    Case(
        "slurm.conf a link to a file on the node's own disk",
        (Probe(), standby(Conf(fstype="xfs", source="/dev/nvme0n1p1"))),
        DEGRADED,
        "ctl1",
        (
            (ReasonCode.SLURM_CONF_LOCAL_COPY, "slurm.conf on ctl2 is a local copy: "),
            (ReasonCode.SLURM_CONF_LOCAL_COPY, "is on xfs /dev/nvme0n1p1, not on the shared file system of "),
        ),
    ),
    Case(
        "Slurm versions differ",
        (Probe(), standby(Conf(version="25.11.7"))),
        DEGRADED,
        "ctl1",
        (
            (
                ReasonCode.SLURM_VERSION_DIFFERS,
                "the Slurm version differs between controllers: 24.11.5 on ctl1; 25.11.7 on ctl2",
            ),
        ),
    ),
    Case(
        "Slurm versions differ: the reason names each controller's /opt/slurm link",
        (
            dataclasses.replace(Probe(), slurm_link="/opt/slurm-24.11.5"),
            dataclasses.replace(standby(Conf(version="25.11.7")), slurm_link="/opt/slurm-25.11.7"),
        ),
        DEGRADED,
        "ctl1",
        (
            (
                ReasonCode.SLURM_VERSION_DIFFERS,
                "the Slurm version differs between controllers: 24.11.5 on ctl1; 25.11.7 on ctl2 "
                "(/opt/slurm: ctl1 -> /opt/slurm-24.11.5; ctl2 -> /opt/slurm-25.11.7)",
            ),
        ),
    ),
    Case(
        "SlurmctldHost lists differ",
        (Probe(), standby(Conf(hosts=("ctl1(10.214.0.11)",)))),
        DEGRADED,
        "ctl1",
        (
            (
                ReasonCode.SLURMCTLD_HOSTS_DIFFER,
                "the SlurmctldHost list differs between controllers: "
                "ctl1(10.214.0.11) ctl2(10.214.0.12) on ctl1; ctl1(10.214.0.11) on ctl2",
            ),
        ),
    ),
    Case(
        "SlurmctldTimeouts differ",
        (Probe(), standby(Conf(timeout=120))),
        DEGRADED,
        "ctl1",
        (
            (
                ReasonCode.SLURMCTLD_TIMEOUT_DIFFERS,
                "SlurmctldTimeout differs between controllers: 10 s on ctl1; 120 s on ctl2",
            ),
        ),
    ),
    Case(
        "StateSaveLocations differ",
        (Probe(), standby(Conf(state="/var/spool/slurmctld"))),
        DEGRADED,
        "ctl1",
        (
            (
                ReasonCode.STATE_SAVE_LOCATION_DIFFERS,
                f"StateSaveLocation differs between controllers: {STATE} on ctl1; "
                "/var/spool/slurmctld on ctl2",
            ),
        ),
    ),
    Case(
        "StateSaveLocation on another file system of the same type",
        (Probe(), standby(Conf(), state_source="10.0.0.9@tcp:/other")),
        DEGRADED,
        "ctl1",
        (
            (
                ReasonCode.STATE_SAVE_DEVICE_DIFFERS,
                "StateSaveLocation's file system differs between controllers: lustre fsx on ctl1; "
                "lustre 10.0.0.9@tcp:/other on ctl2",
            ),
        ),
    ),
    Case(
        "after a failover, the new active controller's slurm.conf is a local copy: DEGRADED, not FAILED_OVER",
        (CTL1_KILLED, dataclasses.replace(CTL2_TOOK_OVER, conf=Conf(link=False))),
        DEGRADED,
        "ctl2",
        (
            (ReasonCode.ACTIVE_CONTROLLER, "ctl2 is active"),
            (ReasonCode.SLURM_CONF_LOCAL_COPY, "slurm.conf on ctl2 is a local copy"),
        ),
    ),
    Case(
        "three controllers: backup2's version differs",
        three_all_up(Conf(), Conf(), Conf(version="24.11.1")),
        DEGRADED,
        "ctl1",
        (
            (
                ReasonCode.SLURM_VERSION_DIFFERS,
                "the Slurm version differs between controllers: 24.11.5 on ctl1, ctl2; 24.11.1 on ctl3",
            ),
        ),
    ),
    Case(
        "drift beside DOWN: told, the verdict stays DOWN",
        (
            Probe(slurmctld="T", ping=None, heartbeat=(0, 8)),
            standby(Conf(timeout=30), ping="ping_primary_down.txt", heartbeat=(0, 8)),
        ),
        DOWN,
        None,
        (
            (ReasonCode.HEARTBEAT_HOLDER_HUNG, "ctl1 still holds the heartbeat"),
            (
                ReasonCode.SLURMCTLD_TIMEOUT_DIFFERS,
                "SlurmctldTimeout differs between controllers: 10 s on ctl1; 30 s on ctl2",
            ),
        ),
    ),
    Case(
        "drift beside SPLIT_BRAIN: told, the verdict stays SPLIT_BRAIN",
        (Probe(heartbeat=(0, 0), conf=Conf(link=False)), CTL2_TOOK_OVER),
        SPLIT_BRAIN,
        None,
        (
            (ReasonCode.SEVERAL_ACTIVE, "2 controllers act as the active one"),
            (ReasonCode.SLURM_CONF_LOCAL_COPY, "slurm.conf on ctl1 is a local copy"),
        ),
    ),
]
