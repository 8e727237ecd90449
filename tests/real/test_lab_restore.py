"""Restoring redundancy on the real Slurm lab (issue 24's proofs), with the stack as deployed:
the template's defaults but for ``RestoreRedundancy`` and a shortened ``RedundancyGraceMinutes``.

Each test runs one scenario of :mod:`hyperpod_ha_dev.simulation.lab.restore_scenarios` (a real
fault, the watchdog's tick or the cluster's own trigger, the unchanged workflow and restore on
the embedded stack, the restore's document run on the lab's controllers) and must end as its
catalog entry says, with every check of the scenario passed; the lab is repaired after each.

Needs root, network namespaces and MariaDB; skipped otherwise, failed under CI=true. Holds the
machine's lab lock for the whole module.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hyperpod_ha_dev.cli.simulate import render_timeline
from hyperpod_ha_dev.simulation.lab import LabScenarioResult, baseline_problems, run_lab
from hyperpod_lab import Lab
from tests.real.lab_support import SLURM, lab_session

pytestmark = [pytest.mark.lab, pytest.mark.slow]
# Several minutes each with the stack's own waits (the restore's six checks 10 s apart, the
# grace, 24.11's hand-back): `make test-lab-long`, not CI's lab tier (times in docs/lab.md).
LONG = pytest.mark.lab_long

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    if SLURM != "24.11":
        pytest.skip("the restore's proofs run on Slurm 24.11 (HyperPod's)")
    with lab_session(up=True, no_leftovers=True) as lab:
        yield lab


def _run(lab: Lab, name: str) -> LabScenarioResult:
    result = run_lab(name, ROOT, lab=lab)
    data = result.to_json()
    failed = [f"{c['name']} ({c['detail']})" for c in data["checks"] if not c["passed"]]
    assert result.passed, (
        f"{name}: verdict {result.verdict} (expected {data['expected']['verdict']}), "
        f"incidents {data['incidents']}, executions {data['execution_results']}, "
        f"failed checks {failed}\n{render_timeline(result)}"
    )
    assert baseline_problems(lab) == []  # repaired for the next one
    return result


def test_a_killed_standby_is_found_by_the_watchdog_and_restored(lab: Lab) -> None:
    result = _run(lab, "standby-restored")

    assert (result.verdict, result.redundancy, result.standbys) == ("HEALTHY", "full", ("ctl2",))
    assert [(i["status"]) for i in result.details["incidents_seen"]] == ["Resolved"]
    assert result.fault_to_verdict_seconds is not None


@LONG
def test_a_hung_standby_is_restarted(lab: Lab) -> None:
    result = _run(lab, "standby-hung-restored")

    assert (result.verdict, result.redundancy) == ("HEALTHY", "full")
    assert [a["kind"] for a in result.details["restore_actions"]] == ["start-slurmctld"]


@LONG
def test_a_slurmctld_that_dies_at_every_start_gets_two_attempts_then_the_restore_stops(lab: Lab) -> None:
    result = _run(lab, "crash-loop")

    assert (result.verdict, result.redundancy) == ("HEALTHY", "none")
    assert [a["restored"] for a in result.details["restore_actions"]] == [False, False]
    assert len(result.executions) == 3


def test_an_isolated_primary_gets_no_restore_and_the_incident_says_why(lab: Lab) -> None:
    result = _run(lab, "isolated-no-restore")

    assert result.verdict == "DOWN"
    assert "not restored: the verdict is DOWN" in str(result.details["restore_by_hand"]["blocked"])


@LONG
def test_a_killed_primary_is_started_with_all_and_takes_control_back(lab: Lab) -> None:
    result = _run(lab, "primary-restored")

    assert (result.verdict, result.redundancy) == ("HEALTHY", "full")
    assert [(a["controller"], a["kind"]) for a in result.details["restore_actions"]] == [
        ("ctl1", "hand-back")
    ]


@LONG
def test_after_a_failover_without_restore_redundancy_lost_opens_after_the_grace(lab: Lab) -> None:
    result = _run(lab, "redundancy-lost")

    assert (result.verdict, result.redundancy) == ("FAILED_OVER", "none")
    assert [t["redundancy_step"] for t in result.details["ticks"]] == ["start", "open"]
    assert [(i["kind"], i["status"]) for i in result.details["incidents_seen"]] == [
        ("redundancy-lost", "Open")
    ]
