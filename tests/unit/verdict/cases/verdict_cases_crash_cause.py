"""The verdict's cases of crash loops tied to the configuration change that caused them."""

from __future__ import annotations

from hyperpod_ha.verdict import DOWN, HEALTHY
from hyperpod_ha.verdict.reasons import ReasonCode
from tests.unit.verdict.cases.verdict_probes import Case, Probe

_FATAL = "fatal: something wrong with opening/reading /etc/slurm/topology.conf: No such file or directory"
# The probe read the logs at 23:40:00: both settled at 23:30, slurm.conf changed at 23:36:40.
CTL1_DIED = Probe(
    slurmctld=None,
    ping="Slurmctld(primary) at ctl1 is DOWN\nSlurmctld(backup) at ctl2 is DOWN",
    ping_rc=1,
    heartbeat=(0, 130),
    log=(
        "[2026-11-29T23:30:00.000] Running as primary controller\n"
        "[2026-11-29T23:37:00.000] slurmctld version 24.11.5 started on cluster lab\n"
        f"[2026-11-29T23:38:00.000] {_FATAL}"
    ),
    conf_ages=(("slurm.conf", 200), ("topology.yaml", 90_000)),
)
CTL2_DIED = Probe(
    name="ctl2",
    slurmctld=None,
    ping="Slurmctld(primary) at ctl1 is DOWN\nSlurmctld(backup) at ctl2 is DOWN",
    ping_rc=1,
    heartbeat=(0, 130),
    log=(
        "[2026-11-29T23:30:00.000] slurmctld running in background mode\n"
        "[2026-11-29T23:38:10.000] error: ControlMachine ctl1 not responding, "
        "BackupController1 ctl2 taking over\n"
        f"[2026-11-29T23:39:10.000] {_FATAL}"
    ),
    conf_ages=(("slurm.conf", 200),),
)

CRASH_CAUSE_CASES = [
    Case(
        "conf-crash: both controllers died after slurm.conf changed: DOWN, the change named first",
        (CTL1_DIED, CTL2_DIED),
        DOWN,
        None,
        (
            (
                ReasonCode.CONFIG_CHANGE_CRASH,
                "slurm.conf changed 3 min 20 s ago, 1 min 20 s before ctl1 and ctl2 began to die: " + _FATAL,
            ),
            (ReasonCode.CONFIG_CHANGE_CRASH, "a restart dies the same way until slurm.conf is fixed"),
        ),
    ),
    Case(
        "a standby killed by SIGSEGV after topology.yaml changed (25.11): a note beside HEALTHY",
        (
            Probe(),
            Probe(
                name="ctl2",
                slurmctld=None,
                log="[2026-11-29T23:30:00.000] slurmctld running in background mode",
                conf_ages=(("topology.yaml", 300),),
                signal_exit=("11/SEGV", 240),
            ),
        ),
        HEALTHY,
        "ctl1",
        (
            (
                ReasonCode.CONFIG_CHANGE_CRASH,
                "topology.yaml changed 5 min ago, 1 min before ctl2 began to die: killed by signal 11/SEGV",
            ),
        ),
    ),
]
