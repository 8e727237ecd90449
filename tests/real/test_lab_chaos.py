"""A short chaos run on the real lab, through the command: ``hyperpod-ha lab chaos --minutes 3
--seed SEED --restore standbys --json``. Its faults (the plan is asserted first: the seed gives
them) are injected and healed while the watchdog ticks and the ON/OFF programs publish; after
the final heal the JSON must say it passed, field by field.

Slurm 24.11 only (not in the Makefile's 25.11 and 22.05 sets). Needs root, network namespaces
and MariaDB; skipped otherwise, failed under CI=true.
"""

from __future__ import annotations

import json
import os

import pytest

from hyperpod_ha_cli.main import main
from hyperpod_ha_dev.simulation.lab.chaos_plan import plan_chaos
from hyperpod_lab import Lab
from tests.real.lab_support import SLURM

pytestmark = [pytest.mark.lab, pytest.mark.slow]

SEED = 27  # kill ctl2 (the standby), then onprog-off ctl2 (drift), each healed
MINUTES = 3


def test_a_short_chaos_run_passes(running: Lab, capfd: pytest.CaptureFixture[str]) -> None:
    if SLURM != "24.11":
        pytest.skip("the chaos run is a 24.11 lab test")
    plan = plan_chaos(SEED, MINUTES, ["ctl1", "ctl2"], ["node1", "node2"])
    assert [(f.fault, f.host) for f in plan.faults] == [("kill", "ctl2"), ("onprog-off", "ctl2")]

    saved = os.dup(1)  # the command points stdout at stderr once it holds its result
    try:
        code = main(
            [
                "lab",
                "chaos",
                "--minutes",
                str(MINUTES),
                "--seed",
                str(SEED),
                "--restore",
                "standbys",
                "--json",
            ]
        )
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    out = "".join(line for line in capfd.readouterr().out.splitlines(True) if not line.startswith('{"_aws"'))
    result = json.loads(out)

    assert result["faults_injected"] == len(plan.faults), result["faults"]
    assert all(fault["verdicts_seen"] for fault in result["faults"]), result["faults"]
    assert result["watchdog_ticks"] >= 4
    assert result["final_verdict"] == "HEALTHY", result
    assert result["incidents_open_at_end"] == 0, result["incidents"]
    assert result["leases_held_at_end"] == 0
    assert result["duplicate_ops_items"] == 0, result["duplicate_ops_items_by_problem"]
    assert result["uncaught_failures"] == 0, result["uncaught_failure_executions"]
    assert result["passed"] is True, result["failures"]
    assert code == 0
