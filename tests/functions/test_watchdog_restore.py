"""The watchdog starts a restore, on the embedded stack: a standby whose slurmctld died on a
healthy cluster (HEALTHY, redundancy none: verified, so no trigger) with RestoreRedundancy=standbys.
The watchdog's tick starts a verification run (the restore's planner would act), the run's
verdict starts the restore, the restore's document starts ctl2's slurmctld, and a later tick
sees HEALTHY with redundancy full and starts nothing. With ``off`` the tick starts nothing."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import pytest

from hyperpod_ha_dev.simulation import engine
from hyperpod_ha_dev.simulation.engine import EmbeddedRun, simulated_run
from hyperpod_ha_dev.simulation.restore import RestoreSimulatedCluster
from hyperpod_ha_dev.simulation.scenarios import SCENARIOS, Scenario
from tests.conftest import ROOT

pytestmark = pytest.mark.slow

RUNS = "FailoverVerificationStateMachineArn"
RESTORES = "RedundancyRestoreStateMachineArn"
SETTLED_WITHIN = 180.0


def dead_standby(mode: str) -> Scenario:
    base = SCENARIOS["healthy"]
    return replace(base, parameters={**base.parameters, "RestoreRedundancy": mode})


def settled(run: EmbeddedRun) -> dict[str, list[dict[str, Any]]]:
    """Every execution of both state machines once none runs and, after a restore that
    started slurmctld, its own verification has ended too."""
    deadline = time.monotonic() + SETTLED_WITHIN
    while time.monotonic() < deadline:
        found = {name: run.stack.executions(name) for name in (RUNS, RESTORES)}
        every = [e for executions in found.values() for e in executions]
        restored = any(e["status"] == "SUCCEEDED" for e in found[RESTORES])
        if all(e["status"] != "RUNNING" for e in every) and restored and len(found[RUNS]) > 1:
            return found
        time.sleep(0.5)
    raise TimeoutError(f"the run, the restore and its verification did not end within {SETTLED_WITHIN} s")


def started_on_the_cluster() -> list[str]:
    cluster = engine._current.cluster
    assert isinstance(cluster, RestoreSimulatedCluster)
    return list(cluster.started)


def test_a_tick_on_a_dead_standby_starts_the_restore_and_a_later_tick_is_healthy_and_full() -> None:
    with simulated_run(dead_standby("standbys"), ROOT, RestoreSimulatedCluster) as run:
        first = run.stack.tick()
        assert (first["verdict"], first["redundancy"], first["not_ready"]) == (
            "HEALTHY",
            "none",
            {"ctl2": "slurmctld not running"},
        )
        assert (first["outcome"], first["restore"]) == ("started", True)
        assert first["restore_reason"] == "a restore would act: start-slurmctld ctl2 (slurmctld not running)"

        found = settled(run)
        assert [e["status"] for e in found[RUNS]] == ["SUCCEEDED", "SUCCEEDED"]
        [restore] = found[RESTORES]
        assert restore["status"] == "SUCCEEDED"
        assert started_on_the_cluster() == ["start ctl2"]  # once: the restore's document on ctl2

        later = run.stack.tick()
        assert (later["verdict"], later["redundancy"], later["standbys"]) == ("HEALTHY", "full", ["ctl2"])
        assert (later["outcome"], later["restore"], later["restore_reason"]) == ("verified", False, None)
        assert len(run.stack.executions(RUNS)) == 2  # nothing more started
        run.stack.stop_running_executions()


def test_with_restore_off_the_tick_starts_nothing_and_says_why() -> None:
    with simulated_run(dead_standby("off"), ROOT, RestoreSimulatedCluster) as run:
        tick = run.stack.tick()
        assert (tick["verdict"], tick["redundancy"]) == ("HEALTHY", "none")
        assert (tick["outcome"], tick["restore"]) == ("verified", False)
        assert tick["restore_reason"] == "RestoreRedundancy is off: the restore is left to a person"
        assert run.stack.executions(RUNS) == []
        assert run.stack.executions(RESTORES) == []
        assert started_on_the_cluster() == []
