"""A run, drill or restore stopped by hand, timed out or failed holding the cluster: Step Functions'
status-change event releases the lease (only that execution's), and for a run or a drill opens an
incident."""

from __future__ import annotations

import json
import time
from typing import Any

import boto3
import pytest

from hyperpod_ha import state_table
from hyperpod_ha.lease import Lease, lease_id_for_restore
from hyperpod_ha.runs.abandoned import execution_prefix
from hyperpod_ha_dev.embedded.held_executions import end_execution, held_execution
from tests.conftest import EVENTS, Embedded


def aborted_event(
    execution: dict[str, Any], state_machine_arn: str, status: str = "ABORTED"
) -> dict[str, Any]:
    sample: dict[str, Any] = json.loads((EVENTS / "eventbridge_execution_aborted.json").read_text())
    described = boto3.client("stepfunctions").describe_execution(executionArn=execution["executionArn"])
    sample["detail"].update(
        executionArn=execution["executionArn"],
        stateMachineArn=state_machine_arn,
        status=status,
        input=described["input"],
    )
    return sample


def put(event: dict[str, Any]) -> None:
    boto3.client("events").put_events(
        Entries=[
            {
                "Source": event["source"],
                "DetailType": event["detail-type"],
                "Detail": json.dumps(event["detail"]),
                "Resources": event["resources"],
            }
        ]
    )


def lease(embedded: Embedded) -> Lease | None:
    return state_table.read_lease(boto3.client("dynamodb"), embedded.stack.ref("StateTable"), "ml-cluster")


def test_a_stopped_run_releases_the_lease_and_opens_an_incident(embedded_held: Embedded) -> None:
    embedded_held.stack.invoke(
        "ControllerStatusFunction", json.loads((EVENTS / "sns_controller_on_primary.json").read_text())
    )
    (execution,) = embedded_held.executions()
    embedded_held.stack.stop_running_executions()
    assert lease(embedded_held) is not None

    put(aborted_event(execution, embedded_held.state_machine_arn))  # as Step Functions would

    assert lease(embedded_held) is None
    (item,) = boto3.client("ssm").describe_ops_items(
        OpsItemFilters=[{"Key": "Source", "Values": ["hyperpod-ha"], "Operator": "Equal"}]
    )["OpsItemSummaries"]
    assert "verification itself failed" in item["Title"]


def test_the_rule_lets_finished_runs_through_untouched(embedded_held: Embedded) -> None:
    embedded_held.stack.invoke(
        "ControllerStatusFunction", json.loads((EVENTS / "sns_controller_on_primary.json").read_text())
    )
    (execution,) = embedded_held.executions()
    put(aborted_event(execution, embedded_held.state_machine_arn, status="SUCCEEDED"))
    assert lease(embedded_held) is not None
    assert boto3.client("ssm").describe_ops_items(OpsItemFilters=[])["OpsItemSummaries"] == []


def ended_sample(embedded: Embedded, status: str) -> dict[str, Any]:
    """The sample event, of an execution of the stack's verification state machine that ended
    with ``status`` (the sample's name and input)."""
    sample: dict[str, Any] = json.loads((EVENTS / "eventbridge_execution_aborted.json").read_text())
    detail = sample["detail"]
    assert detail["stateMachineArn"] == embedded.state_machine_arn
    ended = held_execution(embedded.state_machine_arn, detail["name"], json.loads(detail["input"]))
    end_execution(ended, status)
    detail["status"] = status
    return sample


def test_the_sample_event_and_garbage(embedded: Embedded) -> None:
    sample = json.loads((EVENTS / "eventbridge_execution_aborted.json").read_text())
    # Issue 35, finding 2: an event naming no execution Step Functions knows is not acted on.
    assert embedded.stack.invoke("AbandonedRunFunction", sample) == {
        "outcome": "ignored",
        "reason": "Step Functions knows no such execution",
    }
    handled = embedded.stack.invoke("AbandonedRunFunction", ended_sample(embedded, "ABORTED"))
    assert handled["outcome"] == "handled"
    assert handled["lease_released"] is False  # that lease was never taken here
    for garbage in (
        {},
        {"source": "aws.states", "detail": {"status": "ABORTED", "executionArn": "x", "input": "{"}},
    ):
        assert embedded.stack.invoke("AbandonedRunFunction", garbage)["outcome"] == "ignored"


def test_a_run_failed_by_an_uncaught_error_releases_its_still_held_lease(embedded_held: Embedded) -> None:
    embedded_held.stack.invoke(
        "ControllerStatusFunction", json.loads((EVENTS / "sns_controller_on_primary.json").read_text())
    )
    (execution,) = embedded_held.executions()
    embedded_held.stack.stop_running_executions()
    assert lease(embedded_held) is not None

    put(aborted_event(execution, embedded_held.state_machine_arn, status="FAILED"))

    assert lease(embedded_held) is None
    (item,) = boto3.client("ssm").describe_ops_items(
        OpsItemFilters=[{"Key": "Source", "Values": ["hyperpod-ha"], "Operator": "Equal"}]
    )["OpsItemSummaries"]
    assert "verification itself failed" in item["Title"]


def test_a_failed_run_that_released_its_lease_is_left_alone(embedded: Embedded) -> None:
    sample = ended_sample(embedded, "FAILED")  # a verdict's FAILED: its lease is long gone
    answer = embedded.stack.invoke("AbandonedRunFunction", sample)
    assert answer == {"outcome": "ignored", "reason": "the run released its lease itself"}
    assert boto3.client("ssm").describe_ops_items(OpsItemFilters=[])["OpsItemSummaries"] == []


def test_a_stopped_drill_releases_its_lease_and_opens_a_drill_incident(embedded: Embedded) -> None:
    from hyperpod_ha.acting.execution_lease import ExecutionLease

    drills = str(embedded.stack.outputs["FailoverDrillStateMachineArn"])
    # A drill that stops at once (its settings are refused) gives a real execution and input;
    # its lease is then written as the drill's first step writes it. A drill left running
    # would race the stop: moto's interpreter finishes the step it is in.
    execution = boto3.client("stepfunctions").start_execution(
        stateMachineArn=drills,
        name="stopped-drill",
        input=json.dumps({"cluster": "ml-cluster", "poll_seconds": 6000}),
    )
    for _ in range(100):
        described = boto3.client("stepfunctions").describe_execution(executionArn=execution["executionArn"])
        if described["status"] != "RUNNING":
            break
        time.sleep(0.05)
    assert described["status"] == "FAILED"
    assert lease(embedded) is None
    held = ExecutionLease(boto3.client("dynamodb"), embedded.stack.ref("StateTable"), 3600, "drill")
    assert held.take("ml-cluster", execution["executionArn"]) is None

    put(aborted_event(execution, drills))

    assert lease(embedded) is None
    (item,) = boto3.client("ssm").describe_ops_items(
        OpsItemFilters=[{"Key": "Source", "Values": ["hyperpod-ha"], "Operator": "Equal"}]
    )["OpsItemSummaries"]
    assert item["OperationalData"]["hyperpod-ha:kind"]["Value"] == "drill-not-verified"


def test_a_deep_or_mistyped_run_input_is_ignored_not_a_crash(embedded: Embedded) -> None:
    for run_input in ("[" * 100_000, json.dumps({"cluster": "ml-cluster", "lease_id": {"not": "text"}})):
        event = {
            "source": "aws.states",
            "detail": {"status": "ABORTED", "executionArn": "x", "input": run_input},
        }
        assert embedded.stack.invoke("AbandonedRunFunction", event)["outcome"] == "ignored"


def _failed_restore(embedded: Embedded) -> dict[str, Any]:
    """A restore execution that fails at once (its request is refused): a real execution and
    input, whose lease is then written as the restore's first step writes it."""
    restores = str(embedded.stack.outputs["RedundancyRestoreStateMachineArn"])
    execution = boto3.client("stepfunctions").start_execution(
        stateMachineArn=restores,
        name="stopped-restore",
        input=json.dumps({"cluster": "ml-cluster", "wait_seconds": 6000}),
    )
    for _ in range(100):
        described = boto3.client("stepfunctions").describe_execution(executionArn=execution["executionArn"])
        if described["status"] != "RUNNING":
            break
        time.sleep(0.05)
    assert described["status"] == "FAILED"
    return execution


def _hold_for_restore(embedded: Embedded, execution_arn: str) -> Lease:
    held = Lease.for_execution(
        "restore", lease_id_for_restore(execution_arn), execution_arn, int(time.time()), 3600
    )
    table = embedded.stack.ref("StateTable")
    assert state_table.put_lease(boto3.client("dynamodb"), table, "ml-cluster", held) is None
    return held


@pytest.mark.parametrize("status", ["ABORTED", "TIMED_OUT", "FAILED"])
def test_a_restore_that_ended_holding_the_cluster_releases_its_lease(embedded: Embedded, status: str) -> None:
    execution = _failed_restore(embedded)
    _hold_for_restore(embedded, execution["executionArn"])
    restores = str(embedded.stack.outputs["RedundancyRestoreStateMachineArn"])

    put(aborted_event(execution, restores, status=status))  # as Step Functions would, through the rule

    assert lease(embedded) is None
    # The executions alarm tells people; no incident is opened for a restore.
    assert boto3.client("ssm").describe_ops_items(OpsItemFilters=[])["OpsItemSummaries"] == []


@pytest.mark.parametrize("status", ["ABORTED", "TIMED_OUT", "FAILED"])
def test_an_ended_restore_never_releases_a_lease_another_holder_took_since(
    embedded: Embedded, status: str
) -> None:
    execution = _failed_restore(embedded)
    restores = str(embedded.stack.outputs["RedundancyRestoreStateMachineArn"])
    other = _hold_for_restore(embedded, f"{execution_prefix(restores)}a-later-restore")

    answer = embedded.stack.invoke("AbandonedRunFunction", aborted_event(execution, restores, status=status))

    assert answer == {"outcome": "ignored", "reason": "the restore held the cluster's lease no more"}
    assert lease(embedded) == other


# --- issue 35, finding 2: an event's text is not what is acted on ------------------------------


def test_a_forged_event_of_a_running_run_releases_nothing_and_opens_nothing(embedded_held: Embedded) -> None:
    embedded_held.stack.invoke(
        "ControllerStatusFunction", json.loads((EVENTS / "sns_controller_on_primary.json").read_text())
    )
    (execution,) = embedded_held.executions()  # running: held in its settle state
    answer = embedded_held.stack.invoke(
        "AbandonedRunFunction", aborted_event(execution, embedded_held.state_machine_arn)
    )
    assert answer["outcome"] == "ignored"
    assert "status 'RUNNING' is not ABORTED, TIMED_OUT or FAILED" in answer["reason"]
    assert lease(embedded_held) is not None
    assert boto3.client("ssm").describe_ops_items(OpsItemFilters=[])["OpsItemSummaries"] == []


def test_the_incident_tells_the_executions_own_input_not_the_events(embedded: Embedded) -> None:
    sample = ended_sample(embedded, "ABORTED")
    forged = json.loads(sample["detail"]["input"]) | {"reason": "FORGED text for the operators"}
    sample["detail"]["input"] = json.dumps(forged)
    assert embedded.stack.invoke("AbandonedRunFunction", sample)["outcome"] == "handled"
    (item,) = boto3.client("ssm").describe_ops_items(
        OpsItemFilters=[{"Key": "Source", "Values": ["hyperpod-ha"], "Operator": "Equal"}]
    )["OpsItemSummaries"]
    told = json.dumps(boto3.client("ssm").get_ops_item(OpsItemId=item["OpsItemId"])["OpsItem"], default=str)
    assert "slurmctld ON on 10.1.0.12 (primary script)" in told
    assert "FORGED" not in told
