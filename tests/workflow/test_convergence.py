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
    # No bound on how many checks fit or how fast they run (a busy machine makes each slower):
    # what the rule decides is checked against what each decision itself reports. The window
    # (16 s) is many times a check's time, so there is a check before it ends however busy.
    triggered = dt.datetime.now(dt.UTC)
    margin = 6
    start(both_down, triggered.isoformat(), backoff_seconds=1, margin_seconds=margin)
    result = both_down.finish(replace(SCENARIOS["both-down"], parameters={}))
    checks = decided(both_down)
    converged_by = triggered + dt.timedelta(seconds=SLURMCTLD_TIMEOUT + margin)
    assert result.verdict == "DOWN"
    assert len(checks) >= 2
    assert [value["next"] for _, value in checks] == ["check-again"] * (len(checks) - 1) + ["not-verified"]
    assert {value["slurmctld_timeout"] for _, value in checks} == {SLURMCTLD_TIMEOUT}
    # Every decision counts from the trigger's own time: SlurmctldTimeout + margin after it.
    reported = {
        dt.datetime.fromisoformat(value["converged_by"].replace("Z", "+00:00")) for _, value in checks
    }
    assert reported == {converged_by}
    # Waits of 1, 2, 4, 8 s (capped at what is left), each kept before the next check; the
    # final verdict is the first decided once the convergence time has passed.
    waits = [value["wait_seconds"] for _, value in checks[:-1]]
    assert all(1 <= wait <= 2**attempt for attempt, wait in enumerate(waits))
    for (earlier, _), (later, _), wait in zip(checks[:-1], checks[1:], waits, strict=True):
        assert later >= earlier + dt.timedelta(seconds=wait)
    assert checks[-1][0] >= converged_by
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
