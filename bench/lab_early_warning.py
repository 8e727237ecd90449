"""The early warnings on the real Slurm lab (issue 39): their lead time and the probe's added time.

- ``accounting``: ``dbd-stop`` on the active controller and ``job-flood`` from a compute node,
  the watchdog ticking every 10 s with the lab's thresholds
  (``hyperpod_ha_dev.simulation.lab.early_warning``): from the ``accounting-at-risk`` incident's
  opening to the first record slurmctld drops (its log; MaxDBDMsgs at Slurm's floor, 10,000),
  and the time-to-loss the warning estimated then. Target: the warning first (a lead above 0).
- ``overload``: ``rpc-flood``: seconds from the flood to ``controller-overloaded`` opening, and
  whether the healthy lab stayed quiet before it.
- ``probe``: what the probe's sdiag section costs now (``sdiag -t`` and its ``SDIAG_FILTER``)
  against what it ran before (``sdiag`` and a grep of two lines), on the active controller,
  alternated :data:`PROBE_RUNS` times: the median of each and their difference. The probe runs
  its sections at once, so this is an upper bound of what it adds to the probe's end.

Runs only where the lab can (root, namespaces, Slurm, MariaDB: ``bench.lab_verdict``) and only
on a lab that is up (``hyperpod-ha lab up``); leaves it up and clean.
"""

from __future__ import annotations

import importlib
import time
from pathlib import Path
from typing import Any, Final

from bench import ROOT
from bench.lab_verdict import unavailable
from bench.stats import median

PROBE_RUNS: Final = 15
BEFORE: Final = "sdiag | grep -E '^(DBD Agent queue size|Server thread count):'"


def probe_cost(lab: Any, runs: int = PROBE_RUNS) -> dict[str, Any]:
    script = (ROOT / "layers/hyperpod_ha/probe/controller_probe.sh").read_text()
    start = script.index("SDIAG_FILTER='") + len("SDIAG_FILTER='")
    program = script[start : script.index("'\n", start)]
    now = f"sdiag -t | awk '{program}'"
    host = lab.topology.controller_hosts[0].name
    took: dict[str, list[float]] = {"before": [], "now": []}
    for _ in range(runs):
        for name, command in (("before", BEFORE), ("now", now)):
            began = time.perf_counter()
            done = lab.exec(host, ["bash", "-c", command], timeout=60)
            took[name].append(1000 * (time.perf_counter() - began))
            if done.returncode != 0:
                raise RuntimeError(f"{name}: exit {done.returncode}: {done.stderr.strip()[:200]}")
    before, after = median(took["before"]), median(took["now"])
    return {
        "runs": runs,
        "before_ms_median": round(before, 1),
        "now_ms_median": round(after, 1),
        "added_ms_median": round(after - before, 1),
        "note": "each through Lab.exec (nsenter, a shell): the difference is the section's own",
    }


def measure() -> dict[str, Any]:
    reason = unavailable()
    if reason is not None:
        return {"skipped": reason}
    lab = importlib.import_module("hyperpod_lab").Lab()
    if not lab.is_up():
        return {"skipped": "the lab is not up (hyperpod-ha lab up)"}
    runs = importlib.import_module("hyperpod_ha_dev.simulation.lab.early_warning")
    accounting = runs.run_accounting(lab, Path(ROOT))
    overload = runs.run_overload(lab, Path(ROOT))
    lead = accounting.lead_seconds
    return {
        "value": None if lead is None else round(lead, 1),
        "target": "> 0",
        "met": lead is not None and lead > 0,
        "unit": "s from accounting-at-risk's opening to the first dropped record",
        "accounting": {
            "quiet_before": accounting.quiet_before,
            "opened_after_fault_s": _after(accounting.opened_at, accounting.fault_at),
            "first_drop_after_fault_s": _after(accounting.first_drop_at, accounting.fault_at),
            "estimated_time_to_loss_s": accounting.time_to_loss_seconds
            and round(accounting.time_to_loss_seconds, 1),
            "resolved_after_fault_s": _after(accounting.resolved_at, accounting.fault_at),
        },
        "overload": {
            "quiet_before": overload.quiet_before,
            "opened_after_fault_s": _after(overload.opened_at, overload.fault_at),
            "resolved_after_fault_s": _after(overload.resolved_at, overload.fault_at),
        },
        "probe": probe_cost(lab),
    }


def _after(at: float | None, start: float) -> float | None:
    return None if at is None else round(at - start, 1)
