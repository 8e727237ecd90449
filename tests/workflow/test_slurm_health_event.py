"""HyperPod's slurmdbd health event through the real state machine: the run it starts tells
HyperPod's reason among the verdict's reasons, and the incident carries it."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest

from hyperpod_ha_dev.simulation.engine import simulated_run
from hyperpod_ha_dev.simulation.scenarios import SCENARIOS
from tests.conftest import EVENTS, ROOT

pytestmark = pytest.mark.slow

TOLD = "HyperPod reported slurmdbd Unhealthy (DbUnreachable)"


def final_verdict(stack: Any) -> dict[str, Any]:
    sfn = boto3.client("stepfunctions")
    (execution,) = stack.executions()
    events = sfn.get_execution_history(executionArn=execution["executionArn"], maxResults=1000)["events"]
    decided = [
        json.loads(e["stateExitedEventDetails"]["output"])["verdict"]["value"]
        for e in events
        if e.get("stateExitedEventDetails", {}).get("name") == "Decide the verdict"
    ]
    return decided[-1]


def test_an_unhealthy_slurmdbd_event_puts_hyperpods_reason_in_the_verdict() -> None:
    scenario = SCENARIOS["slurmdbd-down"]
    raw = json.loads((EVENTS / "eventbridge_slurmdbd_unhealthy_warn.json").read_text())
    with simulated_run(scenario, ROOT) as run:
        (record,) = run.stack.invoke("HyperPodEventFunction", raw)["records"]
        assert record["outcome"] == "started"
        result = run.finish(scenario)
        verdict = final_verdict(run.stack)
        (incident,) = result.incidents
        item = boto3.client("ssm").get_ops_item(OpsItemId=incident["ops_item_id"])["OpsItem"]
    assert result.verdict == "DEGRADED"
    assert verdict["verdict"] == "DEGRADED"
    assert TOLD in verdict["reasons"]
    assert verdict["reason_codes"][verdict["reasons"].index(TOLD)] == "hyperpod-reported"
    assert len(verdict["reasons"]) > 1  # the rules' own reasons are still there
    assert TOLD in item["Description"]
