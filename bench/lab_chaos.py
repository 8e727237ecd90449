"""A 20-minute chaos run on the real Slurm lab, with a recorded seed: the same run as
``hyperpod-ha lab chaos --minutes 20 --seed 24 --restore standbys``
(:mod:`hyperpod_ha_dev.simulation.lab.chaos`).

Random faults of the lab's catalog, each healed after a random delay, while the watchdog ticks and
the lab's ON/OFF programs publish; then a final heal and a settle. The check: how many of the pass
rules failed (target 0: after the final heal HEALTHY, every incident resolved, no lease held, no
problem with two OpsItems, no execution failed from an uncaught error); the table is kept with it.

Runs only where the lab can (:func:`bench.lab_verdict.unavailable`); brings the lab up (24.11)
if it is not, and leaves it up.
"""

from __future__ import annotations

import importlib
from typing import Any, Final

from bench import ROOT
from bench.lab_verdict import unavailable
from bench.stats import at_most

MINUTES: Final = 20
SEED: Final = 24
RESTORE: Final = "standbys"


def measure() -> dict[str, Any]:
    reason = unavailable()
    if reason is not None:
        return {"skipped": reason}
    lab_module = importlib.import_module("hyperpod_lab")
    chaos = importlib.import_module("hyperpod_ha_dev.simulation.lab.chaos")
    plans = importlib.import_module("hyperpod_ha_dev.simulation.lab.chaos_plan")
    report = importlib.import_module("hyperpod_ha_dev.simulation.lab.chaos_report")
    lab = lab_module.Lab()
    if not lab.is_up():
        lab.up()
    topology = lab.topology
    plan = plans.plan_chaos(
        SEED, MINUTES, [h.name for h in topology.controller_hosts], [h.name for h in topology.compute_hosts]
    )
    result = chaos.run_chaos(lab, ROOT, plan, RESTORE)
    data = result.to_json()
    failures = result.failures()
    return at_most(
        len(failures),
        0,
        "; ".join(failures),
        unit="pass rules failed after the final heal",
        command=f"hyperpod-ha lab chaos --minutes {MINUTES} --seed {SEED} --restore {RESTORE}",
        slurm=topology.slurm,
        table=report.chaos_table(result).splitlines(),
        summary={key: value for key, value in data.items() if key not in ("faults", "incidents")},
        faults=data["faults"],
    )
