"""Lab scenarios of drift that breaks the next failover, made with the lab's own faults.

* ``conf-drift``: ctl2's slurm.conf becomes a local copy with SlurmctldTimeout changed (``sed -i``
  on the link, as HyperPod's start_slurm.sh can do), and its slurmctld reads it again.
* ``notifications-off``: ctl1's slurm.conf becomes a local copy without the
  SlurmctldPrimaryOnProg/OffProg lines (the lifecycle script's anchor line missing), and the
  active slurmctld reconfigures with it: the failover topic would stay silent.

* ``conf-crash``: the shared slurm.conf names a topology plugin without its file (as HyperPod's
  cluster agent can write it), ctl1's slurmctld is restarted: ctl1 dies at start, ctl2 takes over
  and dies the same way. DOWN, the verdict naming the change and the deaths; ``conf-shared``
  heals it.

Nothing publishes for drift (the ON/OFF programs run only when a controller's role changes):
an operator's run checks the lab, as the watchdog's next tick would. The verdict must be
DEGRADED naming the controller and the difference; then ``conf-shared`` heals it and the same
probe and rules, on every controller, must give HEALTHY again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from hyperpod_ha.controllers.check import NON_INTERACTIVE_DOCUMENT, check_controller
from hyperpod_ha.controllers.models import Controller
from hyperpod_ha.verdict import Verdict, evaluate
from hyperpod_ha.verdict.reasons import ReasonCode
from hyperpod_ha_dev.simulation.engine import ScenarioResult
from hyperpod_ha_dev.simulation.lab.progress import Drill
from hyperpod_ha_dev.simulation.lab.scenario import PERSISTENT_FAULT_PARAMETERS, LabScenario, Verify
from hyperpod_lab import LabRunner
from hyperpod_lab.faults import check

PROBE_SECONDS: Final = 60.0


def _fault(fault: str, host: str) -> Callable[[Drill], None]:
    def inject(drill: Drill) -> None:
        found = check(drill.lab, fault, host)
        did: list[object] = []
        drill.inject(f"{fault} on {host}: {found.summary}", lambda: did.append(found.apply(drill.lab, host)))
        drill.note("  the fault did", str(did[0]))
        drill.operator_run(f"{fault} on {host} (the watchdog's next tick would find it)")

    return inject


def _named_then_healed(host: str, *expected: ReasonCode) -> Verify:
    def verify(drill: Drill, result: ScenarioResult) -> None:
        given = list(zip(result.reason_codes, result.reasons, strict=False))
        for code in expected:
            drill.check(
                f"the verdict gives {code.value} naming {host}",
                any(given_code == code and host in text for given_code, text in given),
                "; ".join(f"{given_code}: {text}" for given_code, text in given)[:400],
            )
        found = check(drill.lab, "conf-shared", host)
        drill.note("heal", f"conf-shared on {host}: {found.apply(drill.lab, host)}")
        verdict = _probe_verdict(drill)
        drill.check(
            f"after conf-shared on {host}, the probe and rules give HEALTHY",
            verdict.name.value == "HEALTHY",
            f"{verdict.name.value}: {'; '.join(verdict.texts)[:400]}",
        )

    return verify


def _probe_verdict(drill: Drill) -> Verdict:
    """The verdict of the probe run now on every controller (no workflow: the same rules)."""
    runner = LabRunner(drill.lab)
    reports = [
        check_controller(
            Controller.from_json(node),
            runner,
            document=NON_INTERACTIVE_DOCUMENT,
            deadline_seconds=PROBE_SECONDS,
        )
        for node in drill.lab.controllers()
    ]
    return evaluate(reports)


def _crash_named_then_healed(drill: Drill, result: ScenarioResult) -> None:
    drill.check(
        "the verdict names the change and the deaths",
        any(
            "slurm.conf changed" in r and "before ctl1 and ctl2 began to die: fatal: " in r
            for r in result.reasons
        ),
        "; ".join(result.reasons)[:600],
    )
    found = check(drill.lab, "conf-shared", "ctl1")
    drill.note("heal", f"conf-shared on ctl1: {found.apply(drill.lab, 'ctl1')}")
    verdict = _probe_verdict(drill)
    drill.check(
        "after conf-shared, a controller is active again",
        verdict.active_controller == "ctl1",
        f"{verdict.name.value}: {'; '.join(r.text for r in verdict.reasons)[:400]}",
    )


DRIFT_SCENARIOS: Final = (
    LabScenario(
        "conf-drift",
        "ctl2's slurm.conf a local copy with SlurmctldTimeout changed (sed -i on the link), read again",
        _fault("conf-drift", "ctl2"),
        frozenset({"DEGRADED"}),
        "DEGRADED",
        parameters=dict(PERSISTENT_FAULT_PARAMETERS),
        verify=_named_then_healed(
            "ctl2",
            ReasonCode.SLURM_CONF_LOCAL_COPY,
            ReasonCode.SLURM_CONF_DIFFERS,
            ReasonCode.SLURMCTLD_TIMEOUT_DIFFERS,
        ),
        why=(
            "ctl1 serves, but ctl2 would take over with its own slurm.conf, a copy no longer shared that "
            "waits another SlurmctldTimeout: the next failover is not the one configured"
        ),
    ),
    LabScenario(
        "conf-crash",
        "the shared slurm.conf names topology/tree without topology.conf; ctl1's slurmctld restarted",
        _fault("conf-crash", "ctl1"),
        frozenset({"DOWN"}),
        "DOWN",
        parameters=dict(PERSISTENT_FAULT_PARAMETERS),
        verify=_crash_named_then_healed,
        why=(
            "every controller that starts dies on the shared configuration: restarting slurmctld only "
            "dies again until the change is undone"
        ),
    ),
    LabScenario(
        "notifications-off",
        "ctl1's slurm.conf a local copy without SlurmctldPrimaryOnProg/OffProg; ctl1 reconfigures with it",
        _fault("onprog-off", "ctl1"),
        frozenset({"DEGRADED"}),
        "DEGRADED",
        parameters=dict(PERSISTENT_FAULT_PARAMETERS),
        verify=_named_then_healed(
            "ctl1",
            ReasonCode.NOTIFICATIONS_OFF,
            ReasonCode.SLURM_CONF_LOCAL_COPY,
        ),
        why=(
            "ctl1 serves, but it runs without the programs that publish to the failover topic: the next "
            "failover would send nothing"
        ),
    ),
)
