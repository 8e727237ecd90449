"""A run stopped by hand: Step Functions' status-change event releases the lease and opens an incident."""

from __future__ import annotations

import json
import time
from typing import Any

import boto3

from hyperpod_ha import state_table
from hyperpod_ha.lease import Lease
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


def test_the_sample_event_and_garbage(embedded: Embedded) -> None:
    sample = json.loads((EVENTS / "eventbridge_execution_aborted.json").read_text())
    handled = embedded.stack.invoke("AbandonedRunFunction", sample)
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
    sample = json.loads((EVENTS / "eventbridge_execution_aborted.json").read_text())
    sample["detail"]["status"] = "FAILED"  # a verdict's FAILED: its lease is long gone
    answer = embedded.stack.invoke("AbandonedRunFunction", sample)
    assert answer == {"outcome": "ignored", "reason": "the run released its lease itself"}
    assert boto3.client("ssm").describe_ops_items(OpsItemFilters=[])["OpsItemSummaries"] == []


def test_a_stopped_drill_releases_its_lease_and_opens_a_drill_incident(embedded: Embedded) -> None:
    from hyperpod_ha.drill.lease import DrillLease
    from hyperpod_ha.lease import lease_id_for_drill

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
    held = DrillLease(boto3.client("dynamodb"), embedded.stack.ref("StateTable"), 3600)
    assert (
        held.take("ml-cluster", lease_id_for_drill(execution["executionArn"]), execution["executionArn"])
        is None
    )

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
