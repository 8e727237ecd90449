"""Running one lab scenario end to end: ready the lab, inject, let the workflow decide, repair."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from hyperpod_ha.observability import logger
from hyperpod_ha.slurm import (
    SlurmOutputError,
    parse_show_config,
)
from hyperpod_ha.verdict import VERIFIED
from hyperpod_ha_dev.embedded.site import SiteController
from hyperpod_ha_dev.simulation.engine import ScenarioResult, embedded_run
from hyperpod_ha_dev.simulation.lab.baseline import restore_lab
from hyperpod_ha_dev.simulation.lab.catalog import LAB_SCENARIOS
from hyperpod_ha_dev.simulation.lab.errors import LabScenarioError, LabScenarioUnknown
from hyperpod_ha_dev.simulation.lab.lock import lab_lock
from hyperpod_ha_dev.simulation.lab.node_secret import NodeSecret
from hyperpod_ha_dev.simulation.lab.progress import (
    Drill,
)
from hyperpod_ha_dev.simulation.lab.result import (
    LabScenarioResult,
    rounded,
    verdicts_at,
)
from hyperpod_ha_dev.simulation.lab.scenario import (
    LabScenario,
)
from hyperpod_ha_dev.simulation.lab.transport import LAB_TRANSPORT, attached_agent, lab_parameters
from hyperpod_ha_dev.simulation.scenarios import Scenario
from hyperpod_lab import Lab, LabError


def _slurmctld_timeout(lab: Lab) -> int | None:
    done = lab.client(["scontrol", "show", "config"], timeout=15)
    try:
        return parse_show_config(done.stdout).slurmctld_timeout if done.returncode == 0 else None
    except SlurmOutputError:
        return None


def _ready(lab: Lab) -> list[str]:
    """Bring the lab up (reused when it runs) and to its baseline; rebuild it as a last resort."""
    lab.up()
    try:
        return restore_lab(lab)
    except (LabScenarioError, LabError) as problem:
        reason = problem.reason
    logger.warning("the lab did not come back to its baseline: rebuilding it", extra={"reason": reason})
    lab.down()
    lab.up()
    return [f"rebuilt the lab ({reason})", *restore_lab(lab)]


def run_lab_scenario(name: str, root: Path, *, lab: Lab | None = None) -> ScenarioResult:
    """``hyperpod-ha simulate <name> --lab``: :func:`run_lab`, typed as the simulated scenarios'
    result so the command treats both alike (it is a :class:`LabScenarioResult`)."""
    return run_lab(name, root, lab=lab)


def run_lab(name: str, root: Path, *, lab: Lab | None = None, defaults: bool = False) -> LabScenarioResult:
    """Run one lab scenario end to end (root only); the lab is left up and clean.

    ``defaults``: the stack with the template's default parameters, nothing overridden (the
    benchmark's setting); otherwise the scenario's parameters over the quick run settings. A
    scenario of the stack as deployed (``defaults`` on the scenario) keeps its parameters (the
    restore's mode) over the template's defaults either way."""
    scenario = LAB_SCENARIOS.get(name)
    if scenario is None:
        raise LabScenarioUnknown(f"no lab scenario {name!r}; known: {', '.join(LAB_SCENARIOS)}")
    lab = lab_for(scenario, lab or Lab())
    scenario = scenario.on(lab.topology.slurm)
    with lab_lock():
        prepared = _ready(lab)
        slurmctld_timeout = _slurmctld_timeout(lab)
        controllers = [
            SiteController(c["instance_id"], c["private_ip"], c["hostname"]) for c in lab.controllers()
        ]
        secret = NodeSecret(lab.paths.node_secret_dir)
        try:
            before = scenario.precondition(lab) if scenario.precondition else None
            with (
                attached_agent(lab, secret),
                embedded_run(
                    root,
                    controllers,
                    LAB_TRANSPORT,
                    lab_parameters({} if defaults and not scenario.defaults else scenario.parameters),
                    function_transports={"RestoreRedundancyFunction": LAB_TRANSPORT},
                    fast=not (defaults or scenario.defaults),
                ) as run,
            ):
                drill = Drill(lab, run)
                if prepared:
                    drill.note("lab restored before the scenario", "; ".join(prepared), at=run.started)
                if before:
                    drill.note("before the fault", before, at=run.started)
                logger.info("lab scenario starts", extra={"scenario": name})
                scenario.inject(drill)
                workflow = run.finish(_engine_scenario(scenario))
                if scenario.verify is not None:
                    scenario.verify(drill, workflow)
        finally:
            secret.close()
            repairs = restore_lab(lab)
        drill.note("lab repaired", "; ".join(repairs) or "nothing to repair")
        drill.note("the lab stays up", "`python -m hyperpod_lab down` removes it")
        return _result(scenario, drill, workflow, slurmctld_timeout)


def _series(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def lab_for(scenario: LabScenario, lab: Lab) -> Lab:
    """The lab the scenario needs: ``lab`` itself, or one like it with the scenario's controllers."""
    if scenario.min_slurm and _series(lab.topology.slurm) < _series(scenario.min_slurm):
        raise LabScenarioError(
            f"{scenario.name} needs Slurm {scenario.min_slurm} or newer; this lab runs {lab.topology.slurm}"
        )
    if lab.topology.controllers == scenario.controllers:
        return lab
    return Lab(dataclasses.replace(lab.topology, controllers=scenario.controllers), admin=lab.admin)


def _engine_scenario(scenario: LabScenario) -> Scenario:
    return Scenario(
        name=scenario.name,
        summary=scenario.summary,
        ctl1=(),
        ctl2=(),
        notification="",
        expect_verdict=scenario.expect_label,
        # LabScenarioResult judges the lab's runs; this is the engine's view only.
        expect_incidents=0 if scenario.expect_verdicts <= VERIFIED else 1,
        parameters={name: value for name, value in scenario.parameters.items() if isinstance(value, int)},
    )


def _result(
    scenario: LabScenario, drill: Drill, workflow: ScenarioResult, slurmctld_timeout: int | None
) -> LabScenarioResult:
    fault_to_verdict = fault_to_first = None
    verdicts = verdicts_at(workflow, drill.run.started)
    if scenario.measured and drill.fault_at is not None and verdicts:
        fault_to_first = verdicts[0] - drill.fault_at
        fault_to_verdict = verdicts[-1] - drill.fault_at
        takeover = f", takeover after {drill.takeover_seconds:.1f} s" if drill.takeover_seconds else ""
        drill.note(
            "fault to verdict",
            f"{fault_to_verdict:.1f} s (SlurmctldTimeout {slurmctld_timeout} s{takeover}; "
            f"first verdict after {fault_to_first:.1f} s, {len(verdicts)} check(s))",
            at=verdicts[-1],
        )
    result = LabScenarioResult(
        scenario=workflow.scenario,
        verdict=workflow.verdict,
        incidents=workflow.incidents,
        snapshots=workflow.snapshots,
        executions=workflow.executions,
        lease_released=workflow.lease_released,
        timeline=sorted([*workflow.timeline, *drill.entries], key=lambda e: e.seconds),
        reasons=workflow.reasons,
        reason_codes=workflow.reason_codes,
        redundancy=workflow.redundancy,
        standbys=workflow.standbys,
        lab_scenario=scenario,
        fault=drill.fault,
        checks=list(drill.checks),
        fault_to_verdict_seconds=fault_to_verdict,
        fault_to_first_verdict_seconds=fault_to_first,
        takeover_seconds=drill.takeover_seconds,
        slurmctld_timeout_seconds=slurmctld_timeout,
        details=dict(drill.details),
    )
    logger.info(
        "lab scenario done",
        extra={
            "scenario": scenario.name,
            "verdict": result.verdict,
            "passed": result.passed,
            "fault_to_verdict_seconds": rounded(fault_to_verdict),
        },
    )
    return result
