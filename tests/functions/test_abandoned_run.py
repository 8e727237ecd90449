"""A run stopped by hand: Step Functions' status-change event releases the lease and opens an incident."""

from __future__ import annotations

import json
import time
from typing import Any

import boto3

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


def lease(embedded: Embedded) -> dict[str, Any] | None:
    answer = boto3.client("dynamodb").get_item(
        TableName=embedded.stack.ref("StateTable"), Key={"pk": {"S": "lease#ml-cluster"}}
    )
    return answer.get("Item")


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


def test_a_stopped_drill_releases_its_lease_and_opens_a_drill_incident(embedded_held: Embedded) -> None:
    drills = str(embedded_held.stack.outputs["FailoverDrillStateMachineArn"])
    execution = boto3.client("stepfunctions").start_execution(
        stateMachineArn=drills,
        name="stopped-drill",
        input=json.dumps({"cluster": "ml-cluster", "poll_seconds": 600}),
    )
    # The drill's first step takes the lease; wait for it, then stop the drill by hand.
    for _ in range(100):
        if lease(embedded_held) is not None:
            break
        time.sleep(0.1)
    assert lease(embedded_held) is not None
    embedded_held.stack.stop_running_executions()

    put(aborted_event(execution, drills))

    assert lease(embedded_held) is None
    (item,) = boto3.client("ssm").describe_ops_items(
        OpsItemFilters=[{"Key": "Source", "Values": ["hyperpod-ha"], "Operator": "Equal"}]
    )["OpsItemSummaries"]
    assert item["OperationalData"]["hyperpod-ha:kind"]["Value"] == "drill-not-verified"
