"""The convergence rule on the real state machine: checks until SlurmctldTimeout + margin has
passed since the trigger's own time, then the verdict is final."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import boto3
import pytest

from hyperpod_ha_dev.simulation.engine import EmbeddedRun, simulated_run
from hyperpod_ha_dev.simulation.scenarios import SCENARIOS
from tests.conftest import ROOT

pytestmark = pytest.mark.slow

# The simulated controllers' captured configuration says SlurmctldTimeout = 10 s.
SLURMCTLD_TIMEOUT = 10


@pytest.fixture
def both_down() -> Iterator[EmbeddedRun]:
    with simulated_run(SCENARIOS["both-down"], ROOT) as run:
        yield run


def start(run: EmbeddedRun, trigger_time: str, **request: Any) -> None:
    payload = {
        "cluster": run.site.cluster_name,
        "trigger": {"source": "operator", "id": "t", "time": trigger_time, "summary": {}},
        "max_attempts": 30,
        **request,
    }
    boto3.client("stepfunctions").start_execution(
        stateMachineArn=run.stack.outputs["FailoverVerificationStateMachineArn"], input=json.dumps(payload)
    )


def decided(run: EmbeddedRun) -> list[tuple[dt.datetime, dict[str, Any]]]:
    """Each "Decide the verdict" as it ended: when, and its verdict."""
    sfn = boto3.client("stepfunctions")
    (execution,) = run.stack.executions()
    events = sfn.get_execution_history(executionArn=execution["executionArn"], maxResults=1000)["events"]
    found = []
    for event in events:
        exited = event.get("stateExitedEventDetails")
        if exited and exited["name"] == "Decide the verdict":
            found.append((event["timestamp"], json.loads(exited["output"])["verdict"]["value"]))
    return found


def test_a_down_cluster_is_checked_until_slurmctld_timeout_plus_margin(both_down: EmbeddedRun) -> None:
    triggered = dt.datetime.now(dt.UTC)
    start(both_down, triggered.isoformat(), backoff_seconds=1, margin_seconds=2)
    result = both_down.finish(replace(SCENARIOS["both-down"], parameters={}))
    checks = decided(both_down)
    converged_by = triggered + dt.timedelta(seconds=SLURMCTLD_TIMEOUT + 2)
    assert result.verdict == "DOWN"
    assert [value["next"] for _, value in checks] == ["check-again"] * (len(checks) - 1) + ["not-verified"]
    assert {value["slurmctld_timeout"] for _, value in checks} == {SLURMCTLD_TIMEOUT}
    # Waits of 1, 2, 4, 8 s capped at the convergence time: a handful of checks, the last after it.
    assert 3 <= len(checks) <= 8
    assert checks[-2][0] < converged_by <= checks[-1][0]
    assert checks[-1][0] - converged_by < dt.timedelta(seconds=8)
    assert len(result.incidents) == 1


def test_a_trigger_older_than_the_convergence_time_gets_one_check(both_down: EmbeddedRun) -> None:
    an_hour_ago = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)).isoformat()
    start(both_down, an_hour_ago, backoff_seconds=1)
    result = both_down.finish(replace(SCENARIOS["both-down"], parameters={}))
    ((_, value),) = decided(both_down)
    assert (value["verdict"], value["next"]) == ("DOWN", "not-verified")
    assert result.verdict == "DOWN"


def test_a_trigger_time_that_is_not_text_is_rejected(both_down: EmbeddedRun) -> None:
    boto3.client("stepfunctions").start_execution(
        stateMachineArn=both_down.stack.outputs["FailoverVerificationStateMachineArn"],
        input=json.dumps({"cluster": both_down.site.cluster_name, "trigger": {"time": 17}}),
    )
    result = both_down.finish(SCENARIOS["both-down"])
    (execution,) = result.executions
    assert (execution["status"], execution["error"]) == ("FAILED", "InvalidRequest")
    assert result.incidents == []
