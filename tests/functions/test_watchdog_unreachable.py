"""The watchdog's record of since when a controller has been unreachable through SSM
(``unreachable#<cluster>``, the restore's reboot waits on it), on the embedded stack: the first
tick that sees the node unreachable writes the time, later ticks keep that first time, the first
tick that reaches it again clears it."""

from __future__ import annotations

import time
from dataclasses import replace

import boto3
import pytest

from hyperpod_ha import state_table
from hyperpod_ha_dev.simulation.engine import simulated_run
from hyperpod_ha_dev.simulation.scenarios import CTL2_INSTANCE, PRIMARY, SCENARIOS, STANDBY, UNREACHABLE
from tests.conftest import ROOT

pytestmark = pytest.mark.slow


def test_the_first_time_is_kept_and_a_reached_node_is_forgotten() -> None:
    scenario = replace(SCENARIOS["healthy"], ctl1=(PRIMARY,), ctl2=(UNREACHABLE, UNREACHABLE, STANDBY))
    with simulated_run(scenario, ROOT) as run:
        dynamodb, table = boto3.client("dynamodb"), run.stack.ref("StateTable")
        first = run.stack.tick()
        since = first["unreachable"][CTL2_INSTANCE]
        assert state_table.unreachable_since(dynamodb, table, "ml-cluster", time.time()) == {
            CTL2_INSTANCE: since
        }
        # A later tick keeps the first time (backdated here: ticks a second apart would not tell).
        state_table.forget_unreachable(dynamodb, table, "ml-cluster", CTL2_INSTANCE, since)
        state_table.mark_unreachable(dynamodb, table, "ml-cluster", CTL2_INSTANCE, since - 600, since + 3600)
        assert run.stack.tick()["unreachable"] == {CTL2_INSTANCE: since - 600}
        reached = run.stack.tick()
        assert reached["unreachable"] == {}
        assert reached["standbys"] == ["ctl2"]
        assert state_table.unreachable_since(dynamodb, table, "ml-cluster", time.time()) == {}
