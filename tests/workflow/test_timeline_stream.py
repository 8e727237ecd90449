"""The timeline as the run goes: each entry told while the execution still runs, none lost or
told twice (``hyperpod-ha simulate`` prints them then, not after the run)."""

from __future__ import annotations

import boto3
import pytest

from hyperpod_ha_dev.simulation.engine import run_scenario
from hyperpod_ha_dev.simulation.scenarios import SCENARIOS
from hyperpod_ha_dev.simulation.timeline import TimelineEntry, timeline_json
from tests.conftest import ROOT

pytestmark = pytest.mark.slow


def test_entries_are_told_while_the_execution_runs_each_once() -> None:
    told: list[tuple[TimelineEntry, bool]] = []

    def follow(entry: TimelineEntry) -> None:
        executions = boto3.client("stepfunctions").list_executions(stateMachineArn=_machine(), maxResults=10)[
            "executions"
        ]
        told.append((entry, any(e["status"] == "RUNNING" for e in executions)))

    def _machine() -> str:
        [machine] = [
            m["stateMachineArn"]
            for m in boto3.client("stepfunctions").list_state_machines()["stateMachines"]
            if "Verification" in m["name"]
        ]
        return str(machine)

    result = run_scenario(SCENARIOS["failover"], ROOT, follow=follow)
    assert result.passed
    # The run's first states were told while it ran, not after. Only the first ones: how far the
    # telling keeps up with a run of a few seconds depends on the machine's load (a loaded one
    # told "Decide the verdict" just after the run had ended), and no test depends on timing.
    running = [entry.what for entry, still_running in told if still_running]
    assert "Check the request" in running
    # Every entry of the collected timeline was told, once.
    streamed = sorted((timeline_json(e) for e, _ in told), key=lambda e: (e["seconds"], e["what"]))
    collected = sorted((timeline_json(e) for e in result.timeline), key=lambda e: (e["seconds"], e["what"]))
    assert streamed == collected
