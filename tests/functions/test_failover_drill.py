"""FailoverDrillFunction's steps on the embedded stack: the lease, the report and its records."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest

from hyperpod_ha import state_table
from hyperpod_ha.commands import CommandResult
from hyperpod_ha.errors import ConfigurationError
from hyperpod_ha.lease import Lease
from hyperpod_ha.status_records import StatusRecords
from hyperpod_ha_dev.embedded.functions import FunctionError, LambdaContext
from hyperpod_ha_dev.embedded.held_executions import end_execution, held_execution
from tests.conftest import Embedded, UseTransport, load_function_module, subscribed_inbox
from tests.fakes.canned_runner import CannedRunner
from tests.functions.test_controller_status import only_record, sns_event

EXECUTION = "arn:aws:states:us-east-1:123456789012:execution:hyperpod-ha-failover-drill:d1"
REQUEST = {"cluster": "ml-cluster", "to": "auto", "hand_back": True, "dry_run": False}


def running(embedded: Embedded, execution: str = EXECUTION) -> str:
    """``execution`` started (if not yet) as a drill of the stack that stays running: the steps
    invoked here act as from inside it."""
    machine = str(embedded.stack.outputs["FailoverDrillStateMachineArn"])
    return held_execution(machine, execution.rsplit(":", 1)[-1], REQUEST)


def begin(embedded: Embedded, execution: str = EXECUTION) -> dict[str, Any]:
    running(embedded, execution)
    result: dict[str, Any] = embedded.stack.invoke(
        "FailoverDrillFunction", {"action": "begin", "request": REQUEST, "execution_id": execution}
    )
    return result


def finish_event(lease: dict[str, Any], **state: Any) -> dict[str, Any]:
    phase = {"target": "ctl2", "active_seconds": 3.1, "verified_seconds": 4.2, "checks": 2}
    return {
        "action": "finish",
        "request": REQUEST,
        "execution_id": EXECUTION,
        "lease": lease,
        "plan": {"refused": None, "primary": {"name": "ctl1"}, "target": {"name": "ctl2"}},
        "check_verdict": "HEALTHY",
        "takeover_started": True,
        "takeover": {**phase, "verdict": "FAILED_OVER", "verified": True},
        "jobs": {"before": ["4"], "survived": ["4"], "lost": {}, "all_survived": True},
        "test_job": {"id": "100", "state": "COMPLETED", "ran": True, "seconds": 2.0, "next": "done"},
        "hand_back": {**phase, "target": "ctl1", "verdict": "HEALTHY", "verified": True},
        "error": None,
        **state,
    }


def held_lease(embedded: Embedded) -> Lease | None:
    return state_table.read_lease(boto3.client("dynamodb"), embedded.stack.ref("StateTable"), "ml-cluster")


def test_the_drill_takes_the_lease_and_a_second_drill_is_refused(embedded: Embedded) -> None:
    taken = begin(embedded)
    assert taken["taken"] is True
    assert begin(embedded)["taken"] is True  # a retried step keeps its own lease
    other = begin(embedded, EXECUTION + "-other")
    assert other["taken"] is False
    assert other["holder"] == EXECUTION
    assert "holds the cluster" in other["reason"]


def test_a_trigger_during_the_drill_joins_it(embedded: Embedded) -> None:
    lease = begin(embedded)
    record = only_record(embedded.stack.invoke("ControllerStatusFunction", sns_event()))
    assert (record["outcome"], record["execution_arn"]) == ("joined", EXECUTION)
    assert embedded.executions() == []  # no verification run beside the drill
    report = embedded.stack.invoke("FailoverDrillFunction", finish_event(lease))
    assert report["joined_triggers"] == 1
    assert report["lease_released"] is True
    assert held_lease(embedded) is None


def test_a_completed_drill_is_reported_on_record_and_in_the_status(embedded: Embedded) -> None:
    inbox = subscribed_inbox(str(embedded.stack.outputs["NotificationTopicArn"]))
    report = embedded.stack.invoke("FailoverDrillFunction", finish_event(begin(embedded)))
    assert report["outcome"] == "completed"
    assert (report["takeover_seconds"], report["verified_seconds"], report["jobs_survived"]) == (
        3.1,
        4.2,
        True,
    )
    assert report["hand_back"]["verified_seconds"] == 4.2
    assert report["incident"] is None
    (message,) = boto3.client("sqs").receive_message(QueueUrl=inbox)["Messages"]
    body = json.loads(message["Body"])
    assert body["Subject"] == "[hyperpod-ha] ml-cluster: failover drill completed: ctl1 -> ctl2 (sev 4)"
    assert body["MessageAttributes"]["kind"] == {"Type": "String", "Value": "drill"}
    assert "verified FAILED_OVER after 4.2 s" in body["Message"]
    item = boto3.client("ssm").get_ops_item(OpsItemId=report["ops_item_id"])["OpsItem"]
    assert item["Status"] == "Resolved"
    records = StatusRecords(boto3.client("dynamodb"), embedded.stack.ref("StateTable")).read("ml-cluster")
    assert records["drill"]["outcome"] == "completed"
    assert records["verdict"]["verdict"] == "HEALTHY"


def test_a_drill_leaving_the_cluster_not_verified_opens_an_incident(embedded: Embedded) -> None:
    not_back = {"target": "ctl1", "verdict": "FAILED_OVER", "verified": False, "checks": 10}
    report = embedded.stack.invoke("FailoverDrillFunction", finish_event(begin(embedded), hand_back=not_back))
    assert (report["outcome"], report["verified"]) == ("failed", False)
    assert "the hand-back was not verified HEALTHY (last verdict FAILED_OVER)" in report["reasons"]
    incident = boto3.client("ssm").get_ops_item(OpsItemId=report["incident"]["ops_item_id"])["OpsItem"]
    assert incident["Status"] == "Open"
    assert incident["OperationalData"]["hyperpod-ha:kind"]["Value"] == "drill-not-verified"


def test_a_refused_drill_leaves_the_holder_s_lease_alone(embedded: Embedded) -> None:
    begin(embedded, EXECUTION + "-holder")
    refused = begin(embedded)
    report = embedded.stack.invoke(
        "FailoverDrillFunction",
        finish_event(
            refused, takeover=None, jobs=None, test_job=None, hand_back=None, takeover_started=False
        ),
    )
    assert (report["outcome"], report["verified"], report["incident"]) == ("refused", None, None)
    assert "lease_released" not in report
    held = held_lease(embedded)
    assert held is not None
    assert held.execution_arn == EXECUTION + "-holder"


@pytest.mark.parametrize(
    "event",
    [
        {"action": "reboot"},
        {"action": "begin", "request": {"cluster": "ml-cluster; id"}, "execution_id": EXECUTION},
        {"action": "takeover", "phase": "sideways", "request": REQUEST, "plan": {}},
        {"action": "takeover", "phase": "takeover", "request": REQUEST, "plan": {}},
        {"action": "takeover", "phase": "hand-back", "request": REQUEST, "plan": ["ctl1"]},
        {"action": "register", "phase": {"name": "sideways", "started_at": 0}, "plan": {}},
        {"action": "register", "phase": "hand-back", "plan": {}},
    ],
)
def test_a_bad_step_is_rejected_with_a_typed_error_and_changes_nothing(
    embedded: Embedded, event: dict[str, Any]
) -> None:
    with pytest.raises(FunctionError) as raised:
        embedded.stack.invoke("FailoverDrillFunction", event)
    assert raised.value.error_type == "InvalidDrillRequest"
    assert held_lease(embedded) is None


def test_a_missing_setting_fails_the_first_step_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    app = load_function_module("failover_drill", fresh=True)
    monkeypatch.setenv("STATE_TABLE", "state")
    monkeypatch.setenv("CLUSTER_NAME", "ml-cluster")
    monkeypatch.setenv("CONTROLLER_GROUP", "controller-machine")
    monkeypatch.delenv("TAKEOVER_DOCUMENT", raising=False)
    context = LambdaContext(
        "FailoverDrillFunction", "arn:aws:lambda:us-east-1:123456789012:function:d", 256, 120
    )
    event = {"action": "begin", "request": REQUEST, "execution_id": EXECUTION}
    with pytest.raises(ConfigurationError, match="TAKEOVER_DOCUMENT"):
        app.lambda_handler(event, context)


# --- issue 35, finding 2: a direct invoke of a step that runs a command -----------------------


@pytest.fixture
def runner(embedded: Embedded, use_transport: UseTransport) -> CannedRunner:
    """The drill documents' transport: records every command, answers that it worked."""
    done = CommandResult("HYPERPOD_HA_RESULT rc=0\n", "", 0, 1.0, "canned")
    canned = CannedRunner(result=done, transport="canned")
    use_transport("canned", canned.factory)
    embedded.stack.override_environment("FailoverDrillFunction", COMMAND_TRANSPORT="canned")
    return canned


def planned(embedded: Embedded, **target: Any) -> dict[str, Any]:
    """A plan as the drill's plan step writes it, from this cluster's discovery; ``target``
    changes the backup it names."""
    ctl1, ctl2 = embedded.stack.invoke("DiscoverControllersFunction", {"cluster": "ml-cluster"})[
        "controllers"
    ]

    def ref(controller: dict[str, Any], index: int, name: str) -> dict[str, Any]:
        return {
            "index": index,
            "name": name,
            "instance_id": controller["instance_id"],
            "target": controller["target"],
        }

    return {"refused": None, "primary": ref(ctl1, 0, "ctl1"), "target": {**ref(ctl2, 1, "ctl2"), **target}}


def takeover(embedded: Embedded, plan: dict[str, Any], execution: str = EXECUTION) -> dict[str, Any]:
    event = {
        "action": "takeover",
        "phase": "takeover",
        "request": REQUEST,
        "plan": plan,
        "execution_id": execution,
    }
    result: dict[str, Any] = embedded.stack.invoke("FailoverDrillFunction", event)
    return result


def test_the_takeover_of_the_drill_that_holds_the_cluster_goes_to_the_discovered_backup(
    embedded: Embedded, runner: CannedRunner
) -> None:
    plan = planned(embedded)
    begin(embedded)
    assert takeover(embedded, plan)["target"] == "ctl2"
    assert [(r.target, r.parameters) for r in runner.requests] == [
        (plan["target"]["target"], {"controllerIndex": ["1"]})
    ]


@pytest.mark.parametrize(
    ("target", "execution", "reason"),
    [
        (
            {"target": "sagemaker-cluster:othercluster_controller-machine-i-0a1b2c3d4e5f60002"},
            EXECUTION,
            "the target is not the one discovery found",
        ),
        (
            {
                "instance_id": "i-0f0f0f0f0f0f00001",
                "target": "sagemaker-cluster:x_worker-group-1-i-0f0f0f0f0f0f00001",
            },
            EXECUTION,
            "is not a controller of this stack's cluster",
        ),
        ({}, EXECUTION + "-forged", "does not hold the cluster's lease"),
    ],
    ids=["another cluster's node", "a worker", "no lease of its own"],
)
def test_a_direct_takeover_outside_its_drill_is_refused_and_sends_nothing(
    embedded: Embedded, runner: CannedRunner, target: dict[str, Any], execution: str, reason: str
) -> None:
    plan = planned(embedded, **target)
    begin(embedded)
    with pytest.raises(FunctionError) as raised:
        takeover(embedded, plan, execution)
    assert raised.value.error_type == "DrillStepRefused"
    assert reason in str(raised.value)
    assert runner.requests == []


def test_a_direct_finish_naming_another_holder_s_lease_releases_nothing(embedded: Embedded) -> None:
    # A verification run's (or another drill's) lease id follows from its execution's ARN.
    holder = begin(embedded, EXECUTION + "-holder")
    with pytest.raises(FunctionError) as raised:
        embedded.stack.invoke("FailoverDrillFunction", finish_event(holder))
    assert raised.value.error_type == "DrillStepRefused"
    held = held_lease(embedded)
    assert held is not None
    assert held.execution_arn == EXECUTION + "-holder"


# --- issue 35, finding 2: a direct invoke of the lease's and the report's steps --------------


def nothing_on_record(embedded: Embedded, inbox: str) -> None:
    """No status record, notice, OpsItem or incident: what a refused report leaves."""
    table = embedded.stack.ref("StateTable")
    assert StatusRecords(boto3.client("dynamodb"), table).read("ml-cluster") == {}
    assert boto3.client("sqs").receive_message(QueueUrl=inbox).get("Messages", []) == []
    filters: list[Any] = [{"Key": "Source", "Values": ["hyperpod-ha"], "Operator": "Equal"}]
    assert boto3.client("ssm").describe_ops_items(OpsItemFilters=filters)["OpsItemSummaries"] == []


def forged_execution(embedded: Embedded, how: str) -> str:
    """The execution a direct invoke names, each way it is not a running drill of this stack."""
    if how == "an ended drill":
        ended = running(embedded, EXECUTION + "-ended")
        end_execution(ended, "SUCCEEDED")
        return ended
    if how == "a restore's execution":
        restores = str(embedded.stack.outputs["RedundancyRestoreStateMachineArn"])
        return held_execution(restores, "d1", REQUEST)
    return {"no such execution": EXECUTION, "not an execution ARN": "d1"}[how]


FORGED = ["no such execution", "an ended drill", "a restore's execution", "not an execution ARN"]


@pytest.mark.parametrize("how", FORGED)
def test_a_direct_finish_outside_a_running_drill_records_sends_and_opens_nothing(
    embedded: Embedded, how: str
) -> None:
    inbox = subscribed_inbox(str(embedded.stack.outputs["NotificationTopicArn"]))
    # Not verified: the report would open an incident, write a verdict, send its summary.
    not_back = {"target": "ctl1", "verdict": "DOWN", "verified": False, "checks": 10}
    event = finish_event({"taken": False}, hand_back=not_back, execution_id=forged_execution(embedded, how))
    with pytest.raises(FunctionError) as raised:
        embedded.stack.invoke("FailoverDrillFunction", event)
    assert raised.value.error_type == "DrillStepRefused"
    assert "nothing is reported or released" in str(raised.value)
    nothing_on_record(embedded, inbox)


def test_a_refused_drill_still_reports_from_its_running_execution(embedded: Embedded) -> None:
    inbox = subscribed_inbox(str(embedded.stack.outputs["NotificationTopicArn"]))
    running(embedded)  # its begin found the cluster busy: no lease taken
    event = finish_event({"taken": False, "reason": "a run holds the cluster now"}, plan=None)
    event |= {"takeover": None, "jobs": None, "test_job": None, "hand_back": None, "takeover_started": False}
    report = embedded.stack.invoke("FailoverDrillFunction", event)
    assert report["outcome"] == "refused"
    table = embedded.stack.ref("StateTable")
    assert StatusRecords(boto3.client("dynamodb"), table).read("ml-cluster")["drill"]["outcome"] == "refused"
    assert len(boto3.client("sqs").receive_message(QueueUrl=inbox)["Messages"]) == 1


@pytest.mark.parametrize("how", FORGED)
def test_a_direct_begin_outside_a_running_drill_takes_no_lease(embedded: Embedded, how: str) -> None:
    event = {"action": "begin", "request": REQUEST, "execution_id": forged_execution(embedded, how)}
    with pytest.raises(FunctionError) as raised:
        embedded.stack.invoke("FailoverDrillFunction", event)
    assert raised.value.error_type == "DrillStepRefused"
    assert held_lease(embedded) is None
