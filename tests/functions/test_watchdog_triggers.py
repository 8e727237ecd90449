"""The watchdog installs the Slurm triggers, on the embedded stack: a cluster just deployed on (no
trigger, no program, strigger on every controller) gets them at the first tick, through the
stack's own SlurmTriggersDocument on each controller (the active one first), and the tick is
HEALTHY with no run started; the next tick finds them and runs nothing. With SlurmTriggers=off
nothing is installed and nothing is drift."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from hyperpod_ha.slurm import TriggerRow, installed_events, parse_strigger_get
from hyperpod_ha.slurm.triggers import TRIGGER_EVENTS
from hyperpod_ha_dev.simulation import engine
from hyperpod_ha_dev.simulation.cluster import SimulatedCluster, SimulatedController
from hyperpod_ha_dev.simulation.engine import simulated_run
from hyperpod_ha_dev.simulation.fake_controller import ControllerState, FakeController
from hyperpod_ha_dev.simulation.scenarios import SCENARIOS, Scenario
from tests.conftest import ROOT

pytestmark = pytest.mark.slow

RUNS = "FailoverVerificationStateMachineArn"
EVERY = tuple(event.name for event in TRIGGER_EVENTS)


class WithStrigger(SimulatedCluster):
    """The healthy cluster, every controller with strigger (the triggers shared, as slurmctld's)."""

    def state_for(self, controller: SimulatedController, check: int) -> ControllerState:
        return replace(super().state_for(controller, check), strigger=True)


def healthy(slurm_triggers: str) -> Scenario:
    base = SCENARIOS["healthy"]
    return replace(base, parameters={**base.parameters, "SlurmTriggers": slurm_triggers})


def node() -> FakeController:
    cluster = engine._current.cluster
    assert isinstance(cluster, WithStrigger)
    return next(iter(cluster._nodes.values()))


def program() -> Path:
    """The program's one path (each simulated node uses the node-local directory in turn)."""
    return node().program_dir / "slurm-trigger"


def rows() -> tuple[TriggerRow, ...]:
    table = node().triggers_file
    return parse_strigger_get(table.read_text()) if table.exists() else ()


def test_the_first_tick_installs_them_and_the_next_finds_them() -> None:
    with simulated_run(healthy("on"), ROOT, WithStrigger) as run:
        first = run.stack.tick()
        step = first["slurm_triggers"]
        assert (step["outcome"], step["installed"], step["reason"]) == (
            "installed",
            11,
            "11 Slurm trigger(s) missing",
        )
        assert list(step["controllers"]) == ["ctl1", "ctl2"]  # the active controller first
        assert (step["controllers"]["ctl1"]["installed"], step["controllers"]["ctl2"]["already"]) == (
            list(EVERY),
            11,
        )
        assert (first["verdict"], first["outcome"]) == ("HEALTHY", "verified")
        assert run.stack.executions(RUNS) == []  # mended by the tick that found it: no run
        assert installed_events(rows(), str(program())) == EVERY
        assert len(rows()) == 11  # ctl2's install found them: set once
        assert program().stat().st_mode & 0o777 == 0o755
        assert f"topic='{run.stack.parameters['SlurmFailoverTopicArn']}'" in program().read_text()

        later = run.stack.tick()
        assert (later["slurm_triggers"]["outcome"], later["verdict"]) == ("nothing", "HEALTHY")
        assert len(rows()) == 11


def test_off_installs_nothing_and_missing_triggers_are_no_drift() -> None:
    with simulated_run(healthy("off"), ROOT, WithStrigger) as run:
        tick = run.stack.tick()
        assert (tick["slurm_triggers"], tick["verdict"], tick["outcome"]) == (None, "HEALTHY", "verified")
        assert rows() == ()
        assert not program().exists()
