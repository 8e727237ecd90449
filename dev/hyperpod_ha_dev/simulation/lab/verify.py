"""``hyperpod-ha lab verify``: the unchanged workflow against the lab as it is now.

No fault is injected and nothing is repaired: an operator's run (as ``runbook start`` starts
one) checks the lab's controllers with the real probe through the embedded stack, and the
result says what the workflow concluded. When a fault was injected with ``hyperpod-ha lab
fault`` since the last verification, the seconds from it to the final verdict are reported.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from hyperpod_ha.trigger import Trigger
from hyperpod_ha_dev.embedded.site import SiteController
from hyperpod_ha_dev.simulation.engine import ScenarioResult, embedded_run
from hyperpod_ha_dev.simulation.lab.lock import lab_lock
from hyperpod_ha_dev.simulation.lab.node_secret import NodeSecret
from hyperpod_ha_dev.simulation.lab.operator_run import operator_runs
from hyperpod_ha_dev.simulation.lab.scenario import PERSISTENT_FAULT_PARAMETERS
from hyperpod_ha_dev.simulation.lab.stack_records import RESTORE, restore_actions, verdict_outputs
from hyperpod_ha_dev.simulation.lab.transport import LAB_TRANSPORT, attached_agent, lab_parameters
from hyperpod_ha_dev.simulation.scenarios import Scenario
from hyperpod_ha_dev.simulation.timeline import Follow
from hyperpod_lab import Lab
from hyperpod_lab.faults import clear, last_fault

VERIFY: Final = Scenario(
    name="lab-verify",
    summary="the workflow against the lab as it is now",
    ctl1=(),
    ctl2=(),
    notification="",
    expect_verdict="HEALTHY",
    expect_incidents=0,
)


# Three checks 5 s apart: a takeover in progress (SlurmctldTimeout is 10 s in the lab) is over by
# the last one, and a lasting fault is not checked for minutes (a check of a controller whose
# slurmctld is gone takes its commands' time limits, about 20-35 s here).
VERIFY_PARAMETERS: Final = {**PERSISTENT_FAULT_PARAMETERS, "MaxAttempts": 3}
FINISH_SECONDS: Final = 300.0


class LabNotUp(ValueError):
    """There is no lab to verify. The reason is safe to log."""


@dataclass
class LabVerification:
    result: ScenarioResult
    slurm_version: str | None
    verdict_output: Mapping[str, Any]  # the last "Decide the verdict" output
    fault: Mapping[str, Any] | None = None
    fault_to_verdict_seconds: float | None = None
    restore_mode: str = "off"
    restore_actions: tuple[Mapping[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        data = self.result.to_json()
        return {
            "verdict": self.result.verdict,
            "active_controller": self.verdict_output.get("active_controller"),
            "reasons": list(self.verdict_output.get("reasons", [])),
            "reason_codes": list(self.verdict_output.get("reason_codes", [])),
            # What is left for the next failover (hyperpod_ha.verdict.redundancy).
            "redundancy": self.verdict_output.get("redundancy"),
            "standbys": list(self.verdict_output.get("standbys") or []),
            "not_ready": dict(self.verdict_output.get("not_ready") or {}),
            "slurm_version": self.slurm_version,
            # Slurm's own answer per controller (25.11+): /readyz's HTTP status, or null and why.
            "readyz": {
                name: {"status": entry.get("readyz"), "why": entry.get("readyz_why")}
                for name, entry in (self.verdict_output.get("evidence") or {}).items()
                if isinstance(entry, Mapping)
            },
            # Known-bad releases the lab's controllers run (hyperpod_ha.slurm.advisories).
            "advisories": list(self.verdict_output.get("advisories") or []),
            "incidents": data["incidents"],
            "snapshots": data["snapshots"],
            "executions": data["executions"],
            "execution_results": data["execution_results"],
            "lease_released": data["lease_released"],
            "fault": dict(self.fault) if self.fault else None,
            "fault_to_verdict_seconds": (
                round(self.fault_to_verdict_seconds, 1) if self.fault_to_verdict_seconds is not None else None
            ),
            "timeline": data["timeline"],
            "restore_mode": self.restore_mode,
            "restore_actions": [dict(action) for action in self.restore_actions],
        }


def slurm_version(lab: Lab) -> str | None:
    """What the lab's Slurm says it is (``slurm 24.11.5`` -> ``24.11.5``)."""
    done = lab.client(["scontrol", "--version"], timeout=15)
    words = done.stdout.split()
    return words[-1] if done.returncode == 0 and words else None


def verify_lab(
    lab: Lab,
    root: Path,
    parameters: Mapping[str, int] | None = None,
    reason: str = "operator verification",
    follow: Follow | None = None,
    restore: str = "off",
) -> LabVerification:
    """Run the workflow once against the lab (root only), with ``RestoreRedundancy`` = ``restore``:
    with ``off`` the lab is left as it is; otherwise a run that finds a controller to restore
    starts the restore, which starts the verification after it (both waited for). ``follow`` is
    told each timeline entry as the run makes it."""
    if not lab.is_up():  # before the lock: a refusal never waits for another user of the lab
        raise LabNotUp("the lab is not up (hyperpod-ha lab up)")
    with lab_lock():
        fault = last_fault(lab.paths.root)
        controllers = [
            SiteController(c["instance_id"], c["private_ip"], c["hostname"]) for c in lab.controllers()
        ]
        settings: dict[str, Any] = {**VERIFY_PARAMETERS, **(parameters or {}), "RestoreRedundancy": restore}
        secret = NodeSecret(lab.paths.node_secret_dir)
        try:
            with (
                attached_agent(lab, secret),
                embedded_run(
                    root,
                    controllers,
                    LAB_TRANSPORT,
                    lab_parameters(settings),
                    function_transports={"RestoreRedundancyFunction": LAB_TRANSPORT},
                ) as run,
            ):
                stack = run.stack
                runs = operator_runs(stack, settings)
                runs.start_or_join(
                    str(stack.parameters["ClusterName"]), Trigger("operator", uuid.uuid4().hex, {}), reason
                )
                # finish() stops what still runs: with a restore, first let the chain end (the
                # run starts the restore, the restore a verification of its own).
                actions = settled_restore_actions(stack, FINISH_SECONDS) if restore != "off" else ()
                result = run.finish(VERIFY, timeout=FINISH_SECONDS, follow=follow)
                output, decided_at = _last_verdict(stack.executions())
        finally:
            secret.close()
        seconds = None
        if fault is not None and decided_at is not None:
            seconds = decided_at - float(fault["at"])
            clear(lab.paths.root)
        return LabVerification(result, slurm_version(lab), output, fault, seconds, restore, actions)


def _last_verdict(executions: list[dict[str, Any]]) -> tuple[dict[str, Any], float | None]:
    """The output of the last "Decide the verdict" state of the runs, and when it ended."""
    found: dict[str, Any] = {}
    at: float | None = None
    for execution in sorted(executions, key=lambda e: e["startDate"]):
        for when, value in verdict_outputs(execution["executionArn"]):
            found, at = dict(value), when
    return found, at


def settled_restore_actions(stack: Any, timeout: float) -> tuple[dict[str, Any], ...]:
    """What the restores the runs started did (each action: controller, kind, restored, what),
    once every run and restore ended (a restore starts its verification before it ends, a run
    its restore: three quiet polls a second apart)."""
    import time

    deadline = time.monotonic() + timeout
    quiet = 0  # polls in a row with a verification and nothing running
    while quiet < 3 and time.monotonic() < deadline:
        time.sleep(1.0)
        runs = stack.executions()
        restores = stack.executions(RESTORE)
        running = any(e["status"] == "RUNNING" for e in [*runs, *restores])
        quiet = quiet + 1 if runs and not running else 0
    return tuple(restore_actions(stack))
