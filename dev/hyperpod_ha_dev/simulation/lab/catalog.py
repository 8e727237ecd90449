"""Every lab scenario by name."""

from __future__ import annotations

from typing import Final

from hyperpod_ha_dev.simulation.lab import injections
from hyperpod_ha_dev.simulation.lab.drift_scenarios import DRIFT_SCENARIOS
from hyperpod_ha_dev.simulation.lab.restore_scenarios import RESTORE_SCENARIOS
from hyperpod_ha_dev.simulation.lab.rotation_scenario import ROTATION_SCENARIO
from hyperpod_ha_dev.simulation.lab.scenario import (
    CONVERGING_PARAMETERS,
    PERSISTENT_FAULT_PARAMETERS,
    LabScenario,
)
from hyperpod_ha_dev.simulation.lab.takeover_scenarios import TAKEOVER_SCENARIOS
from hyperpod_ha_dev.simulation.lab.trigger_scenarios import TRIGGER_SCENARIOS

NOT_VERIFIED: Final = frozenset({"DEGRADED", "SPLIT_BRAIN", "DOWN", "UNKNOWN"})


SCENARIO_LIST: Final = (
    LabScenario(
        "failover",
        "SIGKILL of ctl1's slurmctld; ctl2 takes over after SlurmctldTimeout",
        injections.kill_primary,
        frozenset({"FAILED_OVER"}),
        "FAILED_OVER",
        measured=True,
    ),
    LabScenario(
        "back",
        "after a failover, ctl1's slurmctld starts again and takes control back",
        injections.start_primary,
        frozenset({"HEALTHY"}),
        "HEALTHY",
        precondition=injections.failed_over,
        verify=injections.registration_agrees,
        by_release={
            "24.11": (
                frozenset({"HEALTHY", "DEGRADED"}),
                "HEALTHY or DEGRADED, as slurmdbd's registration says",
                "ctl1 takes control back (after about 30 s: ctl2 saves its state and steps down first). "
                "Whether slurmdbd then names a controller is a race: every controller reaches its own "
                "slurmdbd as 127.0.0.1:6817, and slurmdbd clears the cluster's ControlHost when a "
                "connection from that host and port closes (Slurm's src/slurmdbd/rpc_mgr.c), so ctl2's "
                "closing connection deregisters ctl1 when slurmdbd handles it after ctl1's registration "
                "(most runs here: DEGRADED, 'no controller is registered with slurmdbd', one incident) "
                "and not when before (HEALTHY). Either way the verdict must agree with sacctmgr. A "
                "restart or `scontrol reconfigure` of the active slurmctld registers it again",
            )
        },
    ),
    LabScenario(
        "hung-primary",
        "SIGSTOP of ctl1's slurmctld; ctl2 takes over after SlurmctldTimeout, clients still wait on ctl1",
        injections.stop_primary,
        frozenset({"DEGRADED"}),
        "DEGRADED",
        # The takeover is over when the run starts; what stays wrong stays wrong (seen for
        # 90 s and more): three checks show it.
        parameters={**CONVERGING_PARAMETERS, "MaxAttempts": 3},
        measured=True,
        why=(
            "ctl2 takes over after SlurmctldTimeout, but the stopped slurmctld's socket still accepts "
            "connections (the kernel completes them), so every Slurm client (sinfo, squeue, srun, on the "
            "login host and on ctl2 itself) connects to the first SlurmctldHost, waits MessageTimeout "
            "and fails with 'Socket timed out' instead of trying ctl2: Slurm's clients only move on "
            "when the connection is refused. An active controller nobody can use is DEGRADED, not a "
            "verified failover; it lasts until ctl1 is killed or continued"
        ),
    ),
    LabScenario(
        "both-down",
        "both slurmctld stopped",
        injections.stop_both,
        frozenset({"DOWN"}),
        "DOWN",
        parameters=dict(PERSISTENT_FAULT_PARAMETERS),
        measured=True,
    ),
    LabScenario(
        "silent-failure",
        "both slurmctld stopped and nothing published; the watchdog's next tick finds it",
        injections.stop_both_silently,
        frozenset({"DOWN"}),
        "DOWN",
        parameters={**PERSISTENT_FAULT_PARAMETERS, "WatchdogRateMinutes": 1},
        measured=True,
    ),
    LabScenario(
        "slurmdbd-down",
        "slurmdbd stopped on every controller; scheduling goes on",
        injections.stop_slurmdbd,
        frozenset({"DEGRADED"}),
        "DEGRADED",
        parameters=dict(PERSISTENT_FAULT_PARAMETERS),
    ),
    LabScenario(
        "isolated-primary",
        "ctl1 cut off the network: its heartbeat stays fresh, so ctl2 never takes over",
        injections.isolate_primary,
        NOT_VERIFIED,
        "neither HEALTHY nor FAILED_OVER",
        parameters=dict(PERSISTENT_FAULT_PARAMETERS),
        verify=injections.no_takeover,
        why=(
            "ctl1 cannot be reached and ctl2 sees it DOWN, but ctl1 keeps writing the heartbeat on the "
            "shared state: no backup takes over while it is fresh, so no reachable controller is "
            "active (a network partition, not a failover)"
        ),
    ),
    LabScenario(
        "forged-log",
        "an ordinary user's jobs write every phrase the verdict reads into the active controller's log",
        injections.forge_log,
        frozenset({"HEALTHY"}),
        "HEALTHY",
        parameters=dict(PERSISTENT_FAULT_PARAMETERS),
        verify=injections.forged_lines_logged,
        why=(
            "slurmctld logs a job's unknown partition at its default level, so any user can put "
            "'slurmctld running in background mode' (or a refusal, a fatal error, a takeover) into "
            "the active controller's log; only slurmctld's own whole messages say a role, so the "
            "cluster stays HEALTHY and nothing is opened"
        ),
    ),
    LabScenario(
        "state-unwritable",
        "StateSaveLocation read-only, as a failing FSx would be; ctl1 keeps serving",
        injections.state_unwritable,
        frozenset({"DEGRADED"}),
        "DEGRADED",
        parameters=dict(PERSISTENT_FAULT_PARAMETERS),
        verify=injections.unwritable_seen,
        why=(
            "ctl1 stays active and keeps answering and scheduling, so the cluster is not DOWN; but no "
            "controller can create a file in StateSaveLocation (Read-only file system): slurmctld can save "
            "neither its state nor its heartbeat, so a failover now would lose state. A serving cluster "
            "missing something it needs is DEGRADED, and the run opens an incident"
        ),
    ),
)
# The rotation, the takeovers beyond one backup, the drift and the restores have modules of their own.
LAB_SCENARIOS: Final[dict[str, LabScenario]] = {
    s.name: s
    for s in (
        *SCENARIO_LIST,
        ROTATION_SCENARIO,
        *TAKEOVER_SCENARIOS,
        *DRIFT_SCENARIOS,
        *RESTORE_SCENARIOS,
        *TRIGGER_SCENARIOS,
    )
}
