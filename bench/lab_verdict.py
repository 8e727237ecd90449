"""Time to the final verdict in the real Slurm lab, with the stack's DEFAULT parameters.

Each run is a lab scenario of ``hyperpod_ha_dev.simulation.lab`` (``hyperpod-ha simulate <name>
--lab``): a real fault on the lab's controllers, the trigger the cluster would publish, and
the unchanged workflow on the embedded stack created with the template's defaults (nothing
overridden: the lab's own SlurmctldTimeout of 10 s, read by the probe, is all that differs
from a HyperPod cluster). Measured from the fault to the end of the check that gave the final
verdict:

- ``failover``: SIGKILL of the primary's slurmctld; the backup's "ON" message once it took
  over. Target: FAILED_OVER at most SlurmctldTimeout + 10 s.
- ``both-down``: both slurmctld stopped; the primary's "OFF" message. Target: DOWN at most
  SlurmctldTimeout + ConvergenceMarginSeconds + 15 s (the run checks until SlurmctldTimeout
  plus the margin has passed since the trigger, then ends with that verdict).

Runs only where the lab can: root, network namespaces, Slurm and MariaDB present, the
``hyperpod_lab`` package importable. The lab scenarios take the lab's lock themselves and
leave the lab up and clean (``python -m hyperpod_lab down`` removes it).
"""

from __future__ import annotations

import importlib
import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import util as importlib_util
from typing import Any, Final

from bench import ROOT
from bench.stats import at_most, median

RUNS: Final = 3
FAILOVER_ALLOWANCE_SECONDS: Final = 10
DOWN_ALLOWANCE_SECONDS: Final = 15
SCENARIOS: Final = ("failover", "both-down")
_LAB_API: Final = ("up", "down", "is_up", "controllers", "kill_slurmctld", "start_slurmctld")


def unavailable() -> str | None:
    """Why the lab cannot run here, or None."""
    if os.geteuid() != 0:
        return "the Slurm lab needs root"
    return _lab_api_missing() or _namespaces_missing() or _services_missing()


def _lab_api_missing() -> str | None:
    if importlib_util.find_spec("hyperpod_lab") is None:
        return "hyperpod_lab is not importable"
    try:
        lab_module = importlib.import_module("hyperpod_lab")
    except Exception as error:
        return f"hyperpod_lab does not import: {type(error).__name__}"
    lab_class = getattr(lab_module, "Lab", None)
    if lab_class is None:
        return "hyperpod_lab has no Lab class"
    lacking = [name for name in _LAB_API if not hasattr(lab_class, name)]
    return f"hyperpod_lab.Lab lacks {', '.join(lacking)}" if lacking else None


def _namespaces_missing() -> str | None:
    try:
        probe = subprocess.run(
            ["unshare", "--net", "--uts", "--mount", "true"], capture_output=True, check=False
        )
    except FileNotFoundError:
        return "unshare (util-linux) is missing"
    if probe.returncode != 0:
        return "network, UTS and mount namespaces are not available (unshare failed)"
    return None


def _services_missing() -> str | None:
    """Slurm installed and MariaDB answering (installing packages is make lab-up's job, not a bench's)."""
    lab_packages = importlib.import_module("hyperpod_lab.packages")
    missing = lab_packages.missing_packages()
    if missing:
        return f"Slurm packages missing: {', '.join(missing)} (make lab-up installs them)"
    accounting_db = importlib.import_module("hyperpod_lab.accounting_db")
    try:
        accounting_db.AdminConnection().connect().close()
    except Exception as error:
        return f"MariaDB is not reachable: {getattr(error, 'reason', type(error).__name__)}"
    return None


def default_margin_seconds() -> int:
    from hyperpod_ha_stack.template import load_template

    parameters = load_template(ROOT / "template.yaml")["Parameters"]
    return int(parameters["ConvergenceMarginSeconds"]["Default"])


@dataclass(frozen=True)
class LabRun:
    """One lab scenario as ``hyperpod-ha simulate <name> --lab --json`` reports it."""

    scenario: str
    verdict: str | None
    passed: bool
    fault_to_verdict_seconds: float | None
    slurmctld_timeout_seconds: int | None
    slurm_version: str | None
    checks: int  # how many times the workflow decided a verdict
    timeline: list[dict[str, Any]]

    @classmethod
    def from_json(cls, data: Mapping[str, Any], slurm_version: str | None) -> LabRun:
        timeline = [dict(entry) for entry in data.get("timeline", [])]
        return cls(
            scenario=str(data.get("scenario")),
            verdict=data.get("verdict"),
            passed=bool(data.get("passed")),
            fault_to_verdict_seconds=data.get("fault_to_verdict_seconds"),
            slurmctld_timeout_seconds=data.get("slurmctld_timeout_seconds"),
            slurm_version=slurm_version,
            checks=sum(1 for entry in timeline if str(entry.get("what", "")).strip() == "verdict"),
            timeline=timeline,
        )


def target_seconds(scenario: str, slurmctld_timeout: int, margin: int) -> int:
    if scenario == "failover":
        return slurmctld_timeout + FAILOVER_ALLOWANCE_SECONDS
    return slurmctld_timeout + margin + DOWN_ALLOWANCE_SECONDS


EXPECTED: Final = {"failover": "FAILED_OVER", "both-down": "DOWN"}


def scenario_report(scenario: str, runs: Sequence[LabRun], margin: int) -> dict[str, Any]:
    wrong = [
        index
        for index, run in enumerate(runs)
        if run.verdict != EXPECTED[scenario] or run.fault_to_verdict_seconds is None
    ]
    timeouts = {run.slurmctld_timeout_seconds for run in runs}
    versions = sorted({run.slurm_version for run in runs if run.slurm_version})
    if wrong or None in timeouts or len(timeouts) != 1:
        return {
            "error": f"run(s) {wrong} ended without a measured {EXPECTED[scenario]} verdict"
            if wrong
            else f"SlurmctldTimeout unknown or changing between runs: {sorted(map(str, timeouts))}",
            "verdicts": [run.verdict for run in runs],
            "timelines": [run.timeline for run in runs],
        }
    timeout = int(next(iter(timeouts)))  # type: ignore[arg-type]
    seconds = [float(run.fault_to_verdict_seconds) for run in runs]  # type: ignore[arg-type]
    measured = round(median(seconds), 1)
    target = target_seconds(scenario, timeout, margin)
    note = (
        ""
        if measured <= target
        else "the final verdict comes later than its target: see the timelines for each check and wait"
    )
    return at_most(
        measured,
        target,
        note,
        unit=f"seconds from the fault to the final {EXPECTED[scenario]} verdict (median)",
        slurmctld_timeout_seconds=timeout,
        fault_to_verdict_seconds=[round(value, 1) for value in seconds],
        slurm_version=versions[0] if len(versions) == 1 else versions,
        checks_per_run=[run.checks for run in runs],
        scenario_passed=[run.passed for run in runs],
        parameters="template defaults (nothing overridden)",
        timelines=[run.timeline for run in runs],
    )


def report(by_scenario: Mapping[str, Sequence[LabRun]], margin: int) -> dict[str, Any]:
    return {
        "scenarios": {name: scenario_report(name, runs, margin) for name, runs in by_scenario.items()},
        "margin_seconds": margin,
        "context": (
            "Each run is `hyperpod-ha simulate <scenario> --lab` with the stack's default parameters: "
            "the first check at once, a verdict other than HEALTHY or FAILED_OVER checked again (5 s, "
            "doubling up to 30 s) until SlurmctldTimeout plus ConvergenceMarginSeconds has passed since "
            "the trigger's own time."
        ),
    }


def _slurm_version(lab: Any) -> str | None:
    from hyperpod_ha.slurm import SlurmOutputError, parse_show_config

    shown = lab.client(["scontrol", "show", "config"], timeout=15)
    try:
        return parse_show_config(shown.stdout).version if shown.returncode == 0 else None
    except SlurmOutputError:
        return None


def run_with_defaults(scenario: str, lab: Any, run_lab: Callable[..., Any]) -> LabRun:
    result = run_lab(scenario, ROOT, lab=lab, defaults=True)
    return LabRun.from_json(result.to_json(), _slurm_version(lab))


def measure(runs: int = RUNS) -> dict[str, Any]:
    reason = unavailable()
    if reason is not None:
        return {"skipped": reason}
    lab_module = importlib.import_module("hyperpod_lab")
    run_lab = importlib.import_module("hyperpod_ha_dev.simulation.lab").run_lab
    lab = lab_module.Lab()
    by_scenario = {name: [run_with_defaults(name, lab, run_lab) for _ in range(runs)] for name in SCENARIOS}
    return report(by_scenario, default_margin_seconds())
