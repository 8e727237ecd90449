"""The verdict's cases of Slurm's own answer (25.11+ ``/readyz``): it decides who is active where
it is served; where it is not (24.11, a build without an HTTP parser) the older signals decide."""

from __future__ import annotations

from hyperpod_ha.verdict import DEGRADED, DOWN, FAILED_OVER, HEALTHY, SPLIT_BRAIN
from hyperpod_ha.verdict.reasons import ReasonCode
from tests.unit.verdict.cases.verdict_probes import CTL1_KILLED, CTL2_TOOK_OVER, STANDBY, Case, Probe

_STANDBY_500 = Probe(name="ctl2", log="slurmctld_log_ctl2_standby.txt", readyz=500)

READYZ_CASES = [
    Case(
        "readyz: 204 on ctl1, 500 on the standby: ctl1 is active in Slurm's own words",
        (Probe(readyz=204), _STANDBY_500),
        HEALTHY,
        "ctl1",
        (
            (
                ReasonCode.PRIMARY_ACTIVE,
                "ctl1 (configured primary) is active: its /readyz answers 204 (Slurm's own answer)",
            ),
        ),
    ),
    Case(
        "readyz: 204 on ctl2 after the takeover, ctl1 refuses the connection (killed)",
        (
            Probe(**{**CTL1_KILLED.__dict__, "readyz": "refused"}),
            Probe(**{**CTL2_TOOK_OVER.__dict__, "readyz": 204}),
        ),
        FAILED_OVER,
        "ctl2",
        (
            (
                ReasonCode.BACKUP_TOOK_OVER,
                "ctl2 (SlurmctldHost[1]) took over from ctl1: its /readyz answers 204",
            ),
        ),
    ),
    Case(
        "readyz: two controllers answer 204: split brain in Slurm's own words, logs aside",
        (Probe(readyz=204), Probe(name="ctl2", log="slurmctld_log_ctl2_standby.txt", readyz=204)),
        SPLIT_BRAIN,
        None,
        (
            (ReasonCode.SEVERAL_ACTIVE, "2 controllers act as the active one"),
            (ReasonCode.ACTIVE_CONTROLLER, "ctl2 is active: its /readyz answers 204 (Slurm's own answer)"),
            (
                ReasonCode.SLURMCTLD_READINESS,
                "ctl2's /readyz answers 204 (in control) but it logged 'slurmctld running in background",
            ),
        ),
    ),
    Case(
        "readyz: 500 everywhere while slurmctld runs: no controller is in control, whatever ctl1's log says",
        (Probe(readyz=500), _STANDBY_500),
        DOWN,
        None,
        (
            (ReasonCode.NO_ACTIVE_CONTROLLER, "no controller is active"),
            (ReasonCode.SLURMCTLD_READINESS, "ctl1 logged 'Running as primary controller'"),
            (ReasonCode.SLURMCTLD_READINESS, "but its /readyz answers 500: not in control"),
            (ReasonCode.CONTROLLER_STATE, "/readyz answers 500, answers ping"),
        ),
    ),
    Case(
        "readyz: 204 on ctl2 whose log says standby, the heartbeat ctl1's: /readyz decides, the rest named",
        (Probe(readyz=500), Probe(name="ctl2", log="slurmctld_log_ctl2_standby.txt", readyz=204)),
        DEGRADED,  # slurmdbd still has ctl1 registered
        "ctl2",
        (
            (ReasonCode.ACTIVE_CONTROLLER, "ctl2 is active: its /readyz answers 204"),
            (
                ReasonCode.SLURMCTLD_READINESS,
                "ctl2's /readyz answers 204 (in control) but the heartbeat was last written by ctl1",
            ),
            (ReasonCode.SLURMCTLD_READINESS, "ctl1 logged 'Running as primary controller'"),
        ),
    ),
    Case(
        "readyz: a 25.11 build without an HTTP parser closes unanswered: the log and the heartbeat decide",
        (Probe(readyz="closed"), Probe(name="ctl2", log="slurmctld_log_ctl2_standby.txt", readyz="closed")),
        HEALTHY,
        "ctl1",
        (
            (
                ReasonCode.PRIMARY_ACTIVE,
                "ctl1 (configured primary) is active: logged 'Running as primary controller'",
            ),
        ),
    ),
    Case(
        "readyz: 24.11 serves none: the log and the heartbeat decide",
        (Probe(readyz="24.11"), Probe(**{**STANDBY.__dict__, "readyz": "24.11"})),
        HEALTHY,
        "ctl1",
        (
            (
                ReasonCode.PRIMARY_ACTIVE,
                "ctl1 (configured primary) is active: logged 'Running as primary controller'",
            ),
        ),
    ),
]
