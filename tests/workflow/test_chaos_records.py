"""What the chaos run counts, read from the embedded stack after a silent failure the watchdog's
ticks find (the simulated controllers; the lab's run is tests/real/test_lab_chaos.py): the
ticker keeps ticking after the tick that started the run, the OpsItem is counted by its problem,
the runs' verdicts are read, a run that ends in its DOWN Fail state is not an uncaught failure,
and the lease is released."""

from __future__ import annotations

import time

import pytest

from hyperpod_ha_dev.simulation.engine import simulated_run
from hyperpod_ha_dev.simulation.lab import stack_records
from hyperpod_ha_dev.simulation.scenarios import SCENARIOS
from hyperpod_ha_dev.simulation.ticker import WatchdogTicker
from tests.conftest import ROOT

pytestmark = pytest.mark.slow


def test_the_records_of_a_silent_failure_the_ticks_found() -> None:
    with simulated_run(SCENARIOS["silent-failure"], ROOT) as run:
        stack = run.stack
        with WatchdogTicker(stack, 0.5, keep_ticking=True) as ticker:
            found = ticker.wait_for_run(timeout=60)
            assert found is not None
            wanted = ticker.ticks.index(found) + 3
            deadline = time.monotonic() + 60
            while len(ticker.ticks) < wanted and time.monotonic() < deadline:
                time.sleep(0.2)
        deadline = time.monotonic() + 120
        while any(e["status"] == "RUNNING" for e in stack.executions()) and time.monotonic() < deadline:
            time.sleep(0.2)

        assert len(ticker.ticks) >= wanted  # it went on ticking after the run started
        assert all(tick.verdict == "DOWN" for tick in ticker.ticks)
        assert found.redundancy is not None
        assert found.reasons
        incidents = stack_records.incidents()
        assert len(incidents) == 1
        assert incidents[0].kind == "DOWN"  # the problem: its verdict
        assert not incidents[0].resolved
        observations = stack_records.run_observations(stack)
        assert observations
        assert {o.verdict for o in observations} == {"DOWN"}
        assert [e["status"] for e in stack.executions()] == ["FAILED"]
        assert stack_records.uncaught_failures(stack) == []  # DOWN is the run's own Fail state
        assert stack_records.leases_held(stack) == 0
        assert stack_records.restore_actions(stack) == []
