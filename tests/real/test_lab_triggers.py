"""Slurm's own triggers on the real Slurm lab (issue 37, item 2), with the stack as deployed but
for ``RestoreRedundancy=standbys``: the stack's SlurmTriggersDocument installs the triggers on
each controller through the lab's agent, the lab's failover topic is relayed to the embedded
stack, and the watchdog never ticks.

A dead standby is an event: ctl1's slurmctld fires ``backup_slurmctld_failure`` after
SlurmctldTimeout, its program publishes through the node's ``aws``, ControllerStatusFunction
starts the run (source ``slurm-trigger``), and its restore brings the standby back (HEALTHY,
redundancy full). The scenario's checks are in
:mod:`hyperpod_ha_dev.simulation.lab.trigger_scenarios`; the seconds it took are ``make bench``'s
(``bench/lab_restore.py``), not asserted here.

Needs root, network namespaces and MariaDB; skipped otherwise, failed under CI=true.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hyperpod_ha_dev.cli.simulate import render_timeline
from hyperpod_ha_dev.simulation.lab import baseline_problems, run_lab
from hyperpod_lab import Lab
from tests.real.lab_support import SLURM, lab_session

pytestmark = [pytest.mark.lab, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    if SLURM != "24.11":
        pytest.skip("the triggers' proof runs on Slurm 24.11 (HyperPod's)")
    with lab_session(up=True, no_leftovers=True) as lab:
        yield lab


def test_a_killed_standby_is_told_by_slurms_trigger_and_restored_without_a_tick(lab: Lab) -> None:
    result = run_lab("standby-trigger-restored", ROOT, lab=lab)
    data = result.to_json()
    failed = [f"{c['name']} ({c['detail']})" for c in data["checks"] if not c["passed"]]
    assert result.passed, (
        f"verdict {result.verdict}, executions {data['execution_results']}, failed checks {failed}\n"
        f"{render_timeline(result)}"
    )
    assert (result.verdict, result.redundancy, result.standbys) == ("HEALTHY", "full", ("ctl2",))
    first = result.details["relayed"][0]
    assert (first["event"], first["host"]) == ("backup_slurmctld_failure", "ctl1")
    assert result.details["run_started_seconds"] is not None
    assert result.fault_to_verdict_seconds is not None
    assert "ticks" not in result.details
    assert not (lab.paths.aws_cli_dir / "aws").exists()  # the relay's stand-in went with it
    assert baseline_problems(lab) == []
