"""Every Catch of the workflow, taken with an error injected through moto; the lease is
released on every path, and nothing fails silently."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from hyperpod_ha import state_table
from hyperpod_ha_dev.simulation.engine import EmbeddedRun, simulated_run
from hyperpod_ha_dev.simulation.scenarios import SCENARIOS, Scenario
from tests.conftest import ROOT

pytestmark = pytest.mark.slow


def scenario(name: str, **parameters: int) -> Scenario:
    from dataclasses import replace

    base = SCENARIOS[name]
    return replace(base, parameters={**base.parameters, **parameters})


@pytest.fixture
def healthy() -> Iterator[EmbeddedRun]:
    with simulated_run(scenario("healthy"), ROOT) as run:
        yield run


@pytest.fixture
def unreachable() -> Iterator[EmbeddedRun]:
    with simulated_run(scenario("unreachable", MaxAttempts=1), ROOT) as run:
        yield run


def states(run: EmbeddedRun) -> list[str]:
    sfn = boto3.client("stepfunctions")
    (execution,) = run.stack.executions()
    events = sfn.get_execution_history(executionArn=execution["executionArn"], maxResults=1000)["events"]
    return [e["stateEnteredEventDetails"]["name"] for e in events if "stateEnteredEventDetails" in e]


def ended(run: EmbeddedRun, expected: Scenario | None = None) -> dict[str, Any]:
    result = run.finish(expected or scenario("healthy"))
    assert result.lease_released, "the lease must be released on every path"
    (execution,) = result.executions
    return {
        "status": execution["status"],
        "error": execution["error"],
        "incidents": result.incidents,
        "result": result,
    }


def assert_verification_error(run: EmbeddedRun, outcome: dict[str, Any], failed_state: str) -> None:
    assert (outcome["status"], outcome["error"]) == ("FAILED", "VerificationError")
    visited = states(run)
    assert failed_state in visited
    assert "Report that verification could not complete" in visited
    assert visited[-2:] == ["Release the cluster after an error", "Verification could not complete"]


def test_controllers_not_found(healthy: EmbeddedRun) -> None:
    boto3.client("sagemaker").delete_cluster(ClusterName=healthy.site.cluster_name)
    healthy.notify(SCENARIOS["healthy"].notification)
    outcome = ended(healthy)
    assert_verification_error(healthy, outcome, "Find the controllers")
    (incident,) = outcome["incidents"]
    assert "verification itself failed" in incident["title"]


def test_a_health_check_that_fails(healthy: EmbeddedRun) -> None:
    # The simulated agent reads the Session document; without it every check fails.
    ssm = boto3.client("ssm")
    ssm.delete_document(Name=healthy.stack.ref("ControllerProbeDocument"))
    healthy.notify(SCENARIOS["healthy"].notification)
    outcome = ended(healthy)
    assert_verification_error(healthy, outcome, "Check every controller")
    assert len(outcome["incidents"]) == 1


def test_the_verdict_function_missing(healthy: EmbeddedRun) -> None:
    boto3.client("lambda").delete_function(
        FunctionName=healthy.stack.function("EvaluateVerdictFunction").name
    )
    healthy.notify(SCENARIOS["healthy"].notification)
    outcome = ended(healthy)
    assert_verification_error(healthy, outcome, "Decide the verdict")


def test_a_snapshot_that_cannot_start_is_recorded_not_fatal(healthy: EmbeddedRun) -> None:
    boto3.client("fsx").delete_file_system(FileSystemId=healthy.site.file_system_id)
    healthy.notify(SCENARIOS["healthy"].notification)
    outcome = ended(healthy)
    assert outcome["status"] == "SUCCEEDED"
    assert "Record that the snapshot failed" in states(healthy)
    assert outcome["incidents"] == []


def test_a_snapshot_check_that_fails_is_recorded_not_fatal() -> None:
    with simulated_run(scenario("healthy", SnapshotPollSeconds=2), ROOT) as run:
        sfn = boto3.client("stepfunctions")

        def remove_the_function_while_the_snapshot_is_made() -> None:
            for _ in range(400):
                executions = run.stack.executions()
                if executions and "Wait for the snapshot" in states(run):
                    boto3.client("lambda").delete_function(
                        FunctionName=run.stack.function("SnapshotStateFunction").name
                    )
                    return
                time.sleep(0.02)

        remover = threading.Thread(target=remove_the_function_while_the_snapshot_is_made)
        run.notify(SCENARIOS["healthy"].notification)
        remover.start()
        remover.join()
        outcome = ended(run)
        visited = states(run)
        assert sfn is not None
    assert outcome["status"] == "SUCCEEDED"
    assert visited.index("Check the snapshot") < visited.index("Record that the snapshot failed")


def test_resolving_fails_when_the_notification_topic_is_gone(healthy: EmbeddedRun) -> None:
    boto3.client("sns").delete_topic(TopicArn=healthy.stack.outputs["NotificationTopicArn"])
    healthy.notify(SCENARIOS["healthy"].notification)
    outcome = ended(healthy)
    assert_verification_error(healthy, outcome, "Resolve open incidents")


def test_opening_an_incident_fails(unreachable: EmbeddedRun) -> None:
    boto3.client("sns").delete_topic(TopicArn=unreachable.stack.outputs["NotificationTopicArn"])
    unreachable.notify(SCENARIOS["unreachable"].notification)
    outcome = ended(unreachable, scenario("unreachable"))
    assert_verification_error(unreachable, outcome, "Open an incident")


def test_a_lease_taken_over_meanwhile_is_left_alone() -> None:
    with simulated_run(scenario("healthy", SettleSeconds=2), ROOT) as run:
        run.notify(SCENARIOS["healthy"].notification)
        ddb = boto3.client("dynamodb")
        table = run.stack.ref("StateTable")
        key = state_table.key(state_table.lease_key(run.site.cluster_name))
        ddb.update_item(
            TableName=table,
            Key=key,
            UpdateExpression="SET lease_id = :other",
            ExpressionAttributeValues=state_table.attribute_values({":other": "other"}),
        )
        result = run.finish(scenario("healthy"))
        (execution,) = result.executions
        assert execution["status"] == "SUCCEEDED"
        held = state_table.read_lease(ddb, table, run.site.cluster_name)
        assert (held.lease_id if held else None) == "other"


def test_the_lease_table_gone(healthy: EmbeddedRun) -> None:
    healthy.notify(SCENARIOS["healthy"].notification)
    boto3.client("dynamodb").delete_table(TableName=healthy.stack.ref("StateTable"))
    sfn = boto3.client("stepfunctions")
    (execution,) = healthy.stack.executions()
    for _ in range(300):
        described = sfn.describe_execution(executionArn=execution["executionArn"])
        if described["status"] != "RUNNING":
            break
        time.sleep(0.1)
    assert (described["status"], described.get("error")) == ("FAILED", "VerificationError")
    visited = states(healthy)
    assert visited.index("Release the cluster") < visited.index("Report that verification could not complete")
    assert visited[-2:] == ["Release the cluster after an error", "Verification could not complete"]


def start(run: EmbeddedRun, payload: dict[str, Any]) -> str:
    sfn = boto3.client("stepfunctions")
    return str(
        sfn.start_execution(
            stateMachineArn=run.stack.outputs["FailoverVerificationStateMachineArn"],
            input=json.dumps(payload),
        )["executionArn"]
    )


@pytest.mark.parametrize(
    "payload",
    [
        {},
        {"cluster": 7},
        {"cluster": "ml-cluster", "dry_run": "yes"},
        {"cluster": "ml-cluster", "max_attempts": 0},
    ],
)
def test_bad_input_fails_fast(healthy: EmbeddedRun, payload: dict[str, Any]) -> None:
    start(healthy, payload)
    result = healthy.finish(scenario("healthy"))
    (execution,) = result.executions
    assert (execution["status"], execution["error"]) == ("FAILED", "InvalidRequest")
    assert "Find the controllers" not in states(healthy)
    assert result.incidents == []


def test_a_dry_run_checks_and_decides_only(unreachable: EmbeddedRun) -> None:
    start(
        unreachable,
        {
            "cluster": "ml-cluster",
            "dry_run": True,
            "settle_seconds": 0,
            "backoff_seconds": 0,
            "max_attempts": 1,
        },
    )
    result = unreachable.finish(scenario("unreachable"))
    (execution,) = result.executions
    assert (execution["status"], execution["error"]) == ("FAILED", "UNKNOWN")
    assert result.incidents == []
    assert result.snapshots == []
    assert "Snapshot the Slurm state" not in states(unreachable)
