"""Restoring redundancy on the real Slurm lab, with the stack's defaults but for the restore's mode.

Each run is a restore scenario of ``hyperpod_ha_dev.simulation.lab`` (``hyperpod-ha simulate
<name> --lab``), run with the template's defaults but for ``RestoreRedundancy`` (and, for the
watchdog's incident, ``RedundancyGraceMinutes`` 0): the restore's own defaults (a check every
10 s, six at most) and the lab's SlurmctldTimeout of 10 s. Measured:

- ``standbys``: ``standby-restored``: SIGKILL of the standby's slurmctld (nothing published), a
  watchdog tick, the run and its restore; from the fault to the restore's verification ending
  HEALTHY with redundancy full again. Target 60 s: the tick and a run take seconds, the
  restore's document waits for ping up to 20 s, its first check comes 10 s after it.
- ``all``: ``primary-restored``: SIGKILL of the primary's slurmctld, the backup's ON message,
  the FAILED_OVER run and its restore with ``all``; from the fault to the restore's
  verification ending HEALTHY with control handed back. Target 120 s: the takeover
  (SlurmctldTimeout), then Slurm 24.11 takes about 30 s to hand control back.
- ``watchdog_tick_seconds``: in ``standby-restored``, from the fault to the end of the first
  tick after it (the tick runs the probe on every controller). The schedule fires every
  ``WatchdogRateMinutes`` (default 5, at least 1), so a dead standby is found at most that
  long plus this after it died (``worst_case_seconds``). Target 30 s.
- ``slurm_trigger``: ``standby-trigger-restored``: the stack's Slurm triggers installed, the
  watchdog off, SIGKILL of the standby's slurmctld; the active slurmctld fires
  ``backup_slurmctld_failure`` and its program's message starts the run (issue 37). From the fault
  to the run's start (target SlurmctldTimeout + 30 s: Slurm notices a silent backup within
  SlurmctldTimeout, then the message's delivery), and to the restore's verification ending
  HEALTHY with redundancy full (target 60 s), with no tick at all.

Runs where ``bench.lab_verdict`` can (root, namespaces, the lab's packages, MariaDB); the
scenarios hold the machine's lab lock and leave the lab up and clean.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, Final

from bench import ROOT
from bench.lab_verdict import unavailable
from bench.stats import at_most, median

RUNS: Final = 1
SCENARIOS: Final = {"standbys": "standby-restored", "all": "primary-restored"}
TARGETS: Final = {"standbys": 60, "all": 120}
TICK_TARGET_SECONDS: Final = 30
TRIGGER_SCENARIO: Final = "standby-trigger-restored"
# Slurm notices a silent backup within SlurmctldTimeout; the message's delivery on top.
TRIGGER_DELIVERY_SECONDS: Final = 30
TRIGGER_HEALTHY_TARGET_SECONDS: Final = 60
RATES_MINUTES: Final = (1, 5)  # the template's fastest watchdog rate and its default


def _run(name: str, lab: Any, run_lab: Any) -> dict[str, Any]:
    return dict(run_lab(name, ROOT, lab=lab, defaults=True).to_json())


def mode_report(mode: str, runs: list[Mapping[str, Any]]) -> dict[str, Any]:
    """One mode's check: the median seconds from the fault to HEALTHY again."""
    seconds = [r.get("fault_to_verdict_seconds") for r in runs]
    wrong = [i for i, r in enumerate(runs) if not r.get("passed") or seconds[i] is None]
    if wrong:
        return {
            "error": f"run(s) {wrong} of {SCENARIOS[mode]} did not pass or were not measured",
            "verdicts": [r.get("verdict") for r in runs],
            "failed_checks": [[c["name"] for c in r.get("checks", []) if not c["passed"]] for r in runs],
        }
    measured = round(median([float(s) for s in seconds if s is not None]), 1)
    return at_most(
        measured,
        TARGETS[mode],
        unit="seconds from the fault to HEALTHY with redundancy full again (median)",
        scenario=SCENARIOS[mode],
        fault_to_healthy_seconds=seconds,
        restore_actions=[r.get("restore_actions") for r in runs],
        runs_per_scenario=[r.get("executions") for r in runs],
        slurmctld_timeout_seconds=runs[0].get("slurmctld_timeout_seconds"),
        parameters=f"template defaults but RestoreRedundancy={mode}",
    )


def tick_report(runs: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The watchdog's first tick after a standby died: fault to the tick's end."""
    seconds = [r.get("watchdog_detect_seconds") for r in runs]
    if not seconds or None in seconds:
        return {"error": "no watchdog tick measured in standby-restored"}
    measured = round(median([float(s) for s in seconds if s is not None]), 1)
    return at_most(
        measured,
        TICK_TARGET_SECONDS,
        unit="seconds from the fault to the end of the next tick that found it (median)",
        ticks=[r.get("ticks") for r in runs],
        worst_case_seconds={f"rate {rate} min": rate * 60 + measured for rate in RATES_MINUTES},
    )


def trigger_report(runs: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The dead standby told by Slurm's trigger: the fault to the run's start, and to HEALTHY
    with redundancy full again (medians)."""
    started = [r.get("run_started_seconds") for r in runs]
    healthy = [r.get("fault_to_verdict_seconds") for r in runs]
    wrong = [i for i, r in enumerate(runs) if not r.get("passed") or started[i] is None or healthy[i] is None]
    if not runs or wrong:
        return {
            "error": f"run(s) {wrong} of {TRIGGER_SCENARIO} did not pass or were not measured",
            "failed_checks": [[c["name"] for c in r.get("checks", []) if not c["passed"]] for r in runs],
        }
    timeout = int(runs[0].get("slurmctld_timeout_seconds") or 0)
    return {
        "scenario": TRIGGER_SCENARIO,
        "parameters": "template defaults but RestoreRedundancy=standbys; no watchdog tick",
        "slurmctld_timeout_seconds": timeout,
        "run_start": at_most(
            round(median([float(v) for v in started if v is not None]), 1),
            timeout + TRIGGER_DELIVERY_SECONDS,
            unit="seconds from the fault to the run Slurm's trigger started (median)",
            run_started_seconds=started,
            relayed=[r.get("relayed") for r in runs],
        ),
        "healthy": at_most(
            round(median([float(v) for v in healthy if v is not None]), 1),
            TRIGGER_HEALTHY_TARGET_SECONDS,
            unit="seconds from the fault to HEALTHY with redundancy full again (median)",
            fault_to_healthy_seconds=healthy,
            restore_actions=[r.get("restore_actions") for r in runs],
        ),
    }


def report(
    by_mode: Mapping[str, list[Mapping[str, Any]]], trigger_runs: list[Mapping[str, Any]] | None = None
) -> dict[str, Any]:
    section = {
        "modes": {mode: mode_report(mode, runs) for mode, runs in by_mode.items()},
        "watchdog_tick_seconds": tick_report(list(by_mode.get("standbys", []))),
    }
    if trigger_runs is not None:
        section["slurm_trigger"] = trigger_report(trigger_runs)
    return section


def measure(runs: int = RUNS) -> dict[str, Any]:
    reason = unavailable()
    if reason is not None:
        return {"skipped": reason}
    lab = importlib.import_module("hyperpod_lab").Lab()
    run_lab = importlib.import_module("hyperpod_ha_dev.simulation.lab").run_lab
    by_mode: dict[str, list[Mapping[str, Any]]] = {
        mode: [_run(name, lab, run_lab) for _ in range(runs)] for mode, name in SCENARIOS.items()
    }
    return report(by_mode, [_run(TRIGGER_SCENARIO, lab, run_lab) for _ in range(runs)])


def measure_trigger(runs: int = RUNS) -> dict[str, Any]:
    """The Slurm trigger's figures alone (``slurm_trigger``): one scenario, not the three."""
    reason = unavailable()
    if reason is not None:
        return {"skipped": reason}
    lab = importlib.import_module("hyperpod_lab").Lab()
    run_lab = importlib.import_module("hyperpod_ha_dev.simulation.lab").run_lab
    return trigger_report([_run(TRIGGER_SCENARIO, lab, run_lab) for _ in range(runs)])


def table_lines(section: Mapping[str, Any]) -> list[str]:
    """The lines ``make bench`` prints for this section."""
    if "skipped" in section or "error" in section:
        return [f"Lab restore: {section.get('skipped') or section.get('error')}"]
    lines = []
    for mode, check in section.get("modes", {}).items():
        if "error" in check:
            lines.append(f"Lab restore, {mode}: error: {check['error']}")
            continue
        lines.append(
            f"Lab restore, {mode} ({check['scenario']}, defaults): {check['value']} s from the fault to "
            f"HEALTHY again; target <= {check['target']} s {'yes' if check['met'] else 'MISSED'}"
        )
    tick = section.get("watchdog_tick_seconds", {})
    if "value" in tick:
        worst = ", ".join(f"{rate}: {seconds:.0f} s" for rate, seconds in tick["worst_case_seconds"].items())
        lines.append(
            f"Lab watchdog, a dead standby: found {tick['value']} s after the fault by the next tick "
            f"(worst case {worst}); target <= {tick['target']} s {'yes' if tick['met'] else 'MISSED'}"
        )
    elif "error" in tick:
        lines.append(f"Lab watchdog: error: {tick['error']}")
    trigger = section.get("slurm_trigger")
    if trigger is not None and "error" in trigger:
        lines.append(f"Lab Slurm trigger: error: {trigger['error']}")
    elif trigger is not None:
        start, healthy = trigger["run_start"], trigger["healthy"]
        lines.append(
            f"Lab Slurm trigger, a dead standby ({trigger['scenario']}, no tick): the run started "
            f"{start['value']} s after the fault (target <= {start['target']} s: SlurmctldTimeout "
            f"{trigger['slurmctld_timeout_seconds']} s + {TRIGGER_DELIVERY_SECONDS}) "
            f"{'yes' if start['met'] else 'MISSED'}; HEALTHY with redundancy full again after "
            f"{healthy['value']} s (target <= {healthy['target']} s) {'yes' if healthy['met'] else 'MISSED'}"
        )
    return lines
