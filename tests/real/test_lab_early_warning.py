"""The early warnings against the real Slurm lab (issue 39), through the embedded stack's
watchdog ticking: quiet on the healthy lab; ``rpc-flood`` opens ``controller-overloaded`` on the
active controller and it resolves after ``heal``; ``job-flood`` while ``dbd-stop`` holds opens
``accounting-at-risk`` with a time-to-loss estimate before slurmctld logs its first dropped
record (the lab's MaxDBDMsgs at Slurm's floor), and it resolves once slurmdbd is back.

Needs root, network namespaces and MariaDB; skipped otherwise, failed under CI=true.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hyperpod_ha.early_warning.models import KIND_ACCOUNTING_AT_RISK, KIND_OVERLOADED
from hyperpod_ha_dev.simulation.lab.early_warning import run_accounting, run_overload, summary
from hyperpod_lab import Lab
from tests.conftest import ROOT

pytestmark = [pytest.mark.lab, pytest.mark.slow]


def _say(line: str) -> None:
    print(line, flush=True)


def test_an_rpc_flood_opens_controller_overloaded_then_it_resolves(running: Lab) -> None:
    run = run_overload(running, Path(ROOT), _say)
    print("\n".join(summary(run)))
    assert run.quiet_before  # the healthy lab, the lab's thresholds: no warning
    assert run.opened_at is not None
    opening = next(tick for tick in run.ticks if tick.at == run.opened_at)
    assert opening.figures["controller"] == "ctl1"  # the active controller's figures
    assert run.resolved_at is not None
    assert (KIND_OVERLOADED, "Resolved") in run.incidents
    # Only this warning: an rpc-flood loses no accounting record.
    assert {kind for kind, _ in run.incidents} == {KIND_OVERLOADED}


def test_a_job_flood_without_slurmdbd_warns_before_the_first_record_is_lost(running: Lab) -> None:
    run = run_accounting(running, Path(ROOT), _say)
    print("\n".join(summary(run)))
    assert run.quiet_before
    assert run.opened_at is not None
    assert run.time_to_loss_seconds is not None
    assert run.first_drop_at is not None, "the flood did not fill slurmctld's queue within the run"
    assert run.lead_seconds is not None
    assert run.lead_seconds > 0  # warned before the first record was dropped
    assert run.resolved_at is not None
    assert (KIND_ACCOUNTING_AT_RISK, "Resolved") in run.incidents
