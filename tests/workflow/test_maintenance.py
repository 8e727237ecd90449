"""HyperPod's maintenance through the real state machine: while the cluster or a controller is
being updated, the run notes it, holds the cluster's lease (the update's ON/OFF burst joins
it) and waits; the incident comes only from a check after the update, or once the wait's bound
has passed. Waits are shortened through the stack's parameters and the run's input, never by
changing the definition (MaintenancePollSeconds' floor, 10 s, is the real one)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import boto3
import pytest

from hyperpod_ha.state_table import read_lease
from hyperpod_ha_dev.embedded import delivery
from hyperpod_ha_dev.simulation.engine import EmbeddedRun, simulated_run
from hyperpod_ha_dev.simulation.scenarios import (
    CTL1_INSTANCE,
    DOWN_BACKUP,
    PRIMARY,
    SCENARIOS,
    STANDBY,
)
from tests.conftest import EVENTS, ROOT

pytestmark = pytest.mark.slow

WAITING = "Wait while the cluster is under maintenance"
OFF = "Slurm Controller is OFF (10.214.0.11, Primary Node)"
ON = "Slurm Controller is ON, (10.214.0.12, Primary Node)"
# One poll of the maintenance wait, then the checks after it converge within seconds.
FAST = {"MaintenancePollSeconds": 10, "MaintenanceWaitMinutes": 30}


def _history(run: EmbeddedRun) -> list[dict[str, Any]]:
    sfn = boto3.client("stepfunctions")
    (execution,) = run.stack.executions()
    return [
        dict(e)
        for e in sfn.get_execution_history(executionArn=execution["executionArn"], maxResults=1000)["events"]
    ]


def wait_until_waiting_for_maintenance(run: EmbeddedRun, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if run.stack.executions() and any(
            e.get("stateEnteredEventDetails", {}).get("name") == WAITING for e in _history(run)
        ):
            return
        time.sleep(0.2)
    raise TimeoutError(f"the run did not reach {WAITING!r} within {timeout} s")


def verdicts(run: EmbeddedRun) -> list[dict[str, Any]]:
    """Every "Decide the verdict" of the run, in order."""
    return [
        json.loads(e["stateExitedEventDetails"]["output"])["verdict"]["value"]
        for e in _history(run)
        if e.get("stateExitedEventDetails", {}).get("name") == "Decide the verdict"
    ]


def under_update(run: EmbeddedRun) -> None:
    """HyperPod's platform update: the cluster SystemUpdating, ctl1 being patched."""
    run.site.set_cluster_status("SystemUpdating")
    run.site.set_controller_status(CTL1_INSTANCE, "SystemUpdating")


def update_ended(run: EmbeddedRun) -> None:
    run.site.set_cluster_status("InService")
    run.site.set_controller_status(CTL1_INSTANCE, "Running")


def incidents() -> list[dict[str, Any]]:
    found = boto3.client("ssm").describe_ops_items(
        OpsItemFilters=[{"Key": "Source", "Values": ["hyperpod-ha"], "Operator": "Equal"}]
    )
    return list(found["OpsItemSummaries"])


@pytest.fixture
def down_through_the_update() -> Iterator[EmbeddedRun]:
    with simulated_run(replace(SCENARIOS["both-down"], parameters=FAST), ROOT) as run:
        yield run


def test_an_update_defers_the_incident_until_a_check_after_it_still_fails(
    down_through_the_update: EmbeddedRun,
) -> None:
    run = down_through_the_update
    under_update(run)
    run.notify(OFF)
    wait_until_waiting_for_maintenance(run)
    # While the cluster is updated: no incident, and the lease says what the run waits for.
    assert incidents() == []
    lease = read_lease(boto3.client("dynamodb"), run.stack.ref("StateTable"), run.site.cluster_name)
    assert lease is not None
    assert f"cluster SystemUpdating; controller {CTL1_INSTANCE} SystemUpdating" in lease.maintenance
    assert lease.expires_at >= time.time() + 3600  # this wait plus a whole lease after it
    update_ended(run)
    result = run.finish(replace(SCENARIOS["both-down"], parameters={}))
    steps = verdicts(run)
    assert steps[0]["next"] == "wait-for-maintenance"
    assert steps[0]["reason_codes"][0] == "maintenance-in-progress"
    assert steps[0]["reasons"][0].startswith("maintenance in progress: cluster SystemUpdating")
    assert steps[-1]["next"] == "not-verified"
    # The checks after the update had their own convergence window, counted from its end.
    assert steps[-1]["maintenance"]["ended_at"] > steps[0]["maintenance"]["since"]
    assert steps[-1]["converged_by"] > steps[-1]["maintenance"]["ended_at"]
    assert "maintenance-ended" in steps[-1]["reason_codes"]
    assert result.verdict == "DOWN"
    (incident,) = result.incidents
    item = boto3.client("ssm").get_ops_item(OpsItemId=incident["ops_item_id"])["OpsItem"]
    assert "maintenance seen from" in item["Description"]
    assert result.lease_released


def test_the_updates_on_off_burst_joins_the_one_run_that_verifies_after_it() -> None:
    # ctl1 is patched (not probed) while ctl2 shows both down; after the update both are fine.
    scenario = replace(SCENARIOS["both-down"], ctl1=(PRIMARY,), ctl2=(DOWN_BACKUP, STANDBY), parameters=FAST)
    with simulated_run(scenario, ROOT) as run:
        under_update(run)
        run.notify(OFF)
        wait_until_waiting_for_maintenance(run)
        for index in range(6):
            run.notify(ON if index % 2 else OFF)
        back = json.loads((EVENTS / "eventbridge_cluster_state_in_service.json").read_text())
        (back_in_service,) = run.stack.invoke("HyperPodEventFunction", back)["records"]
        outcomes = [
            record["outcome"]
            for d in delivery.deliveries
            if d.function == "ControllerStatusFunction"
            for record in d.result["records"]
        ]
        update_ended(run)
        result = run.finish(replace(scenario, expect_verdict="HEALTHY", expect_incidents=0))
        steps = verdicts(run)
    assert outcomes == ["started"] + ["joined"] * 6
    assert back_in_service["outcome"] == "joined"
    assert len(result.executions) == 1
    assert (result.executions[0]["status"], result.verdict) == ("SUCCEEDED", "HEALTHY")
    assert steps[0]["next"] == "wait-for-maintenance"
    assert steps[-1]["next"] == "verified"
    assert result.incidents == []
    assert result.lease_released


def test_a_maintenance_that_outlasts_the_wait_opens_the_incident_naming_it(
    down_through_the_update: EmbeddedRun,
) -> None:
    run = down_through_the_update
    under_update(run)
    # An operator's run, its wait bounded at 25 s.
    boto3.client("stepfunctions").start_execution(
        stateMachineArn=run.stack.outputs["FailoverVerificationStateMachineArn"],
        input=json.dumps(
            {
                "cluster": run.site.cluster_name,
                "maintenance_wait_minutes": 25 / 60,
                "maintenance_poll_seconds": 10,
            }
        ),
    )
    result = run.finish(replace(SCENARIOS["both-down"], parameters={}))
    steps = verdicts(run)
    # Polls of 10 s, the last one what is left of the bound (the checks take some of it, more
    # on a busy machine), then the verdict is final.
    assert [s["next"] for s in steps] == ["wait-for-maintenance"] * (len(steps) - 1) + ["not-verified"]
    waits = [s["wait_seconds"] for s in steps[:-1]]
    assert 2 <= len(waits) <= 3
    assert waits[0] == 10
    assert all(0 < wait <= 10 for wait in waits)
    assert sum(waits) <= 25
    assert steps[-1]["wait_seconds"] == 0
    assert steps[-1]["maintenance"]["expired"] is True
    assert result.verdict == "DOWN"
    (incident,) = result.incidents
    item = boto3.client("ssm").get_ops_item(OpsItemId=incident["ops_item_id"])["OpsItem"]
    assert "maintenance did not end within 25 s" in item["Description"]
    assert "cluster SystemUpdating" in item["Description"]
