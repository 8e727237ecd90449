"""RestoreRedundancyFunction's steps on the embedded stack: the lease, the plan with its
guards that need AWS (a roll-out in progress, the hourly bound counted in the table), the
record and its notice, bad input and a bad setting."""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from collections.abc import Iterator
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
from hyperpod_ha_dev.embedded.site import create_site, embedded_aws, rebooted_nodes
from hyperpod_ha_dev.embedded.stack import create_stack
from tests.conftest import FAST_RUNS, ROOT, Embedded, UseTransport, load_function_module, published
from tests.fakes.canned_runner import CannedRunner
from tests.unit.verdict.cases.verdict_probes import Probe, Unreachable, node

EXECUTION = "arn:aws:states:us-east-1:123456789012:execution:hyperpod-ha-redundancy-restore:r1"
REQUEST = {"cluster": "ml-cluster", "mode": "standbys", "dry_run": False}
CTL2_DOWN_PING = "Slurmctld(primary) at ctl1 is UP\nSlurmctld(backup) at ctl2 is DOWN"


def running(embedded: Embedded, execution: str = EXECUTION, request: dict[str, Any] = REQUEST) -> str:
    """``execution`` started (if not yet) as a restore of the stack that stays running: the steps
    invoked here act as from inside it."""
    machine = str(embedded.stack.outputs["RedundancyRestoreStateMachineArn"])
    return held_execution(machine, execution.rsplit(":", 1)[-1], request)


@pytest.fixture
def embedded(embedded: Embedded) -> Embedded:
    """The stack with EXECUTION running: each step invoked here is one of its steps."""
    running(embedded)
    return embedded


def invoke(embedded: Embedded, action: str, **event: Any) -> dict[str, Any]:
    result: dict[str, Any] = embedded.stack.invoke(
        "RestoreRedundancyFunction", {"action": action, "request": REQUEST, **event}
    )
    return result


def plan_event() -> dict[str, Any]:
    """ctl1 active, ctl2's slurmctld not running, as discovery and the probes hand them on."""
    reports = [
        Probe(ping=CTL2_DOWN_PING).report(),
        Probe(name="ctl2", slurmctld=None, log="slurmctld_log_ctl2_standby.txt").report(),
    ]
    return {
        "cluster": {
            "controllers": [node("ctl1").to_json(), node("ctl2").to_json()],
            "maintenance": {"cluster_status": "InService", "controllers": []},
        },
        "reports": [report.to_json() for report in reports],
        "execution_id": EXECUTION,
    }


def held_lease(embedded: Embedded) -> Lease | None:
    return state_table.read_lease(boto3.client("dynamodb"), embedded.stack.ref("StateTable"), "ml-cluster")


def test_the_restore_takes_the_lease_of_its_kind_and_a_second_is_refused(embedded: Embedded) -> None:
    taken = invoke(embedded, "begin", execution_id=EXECUTION)
    assert taken["taken"] is True
    assert invoke(embedded, "begin", execution_id=EXECUTION)["taken"] is True  # a retried step
    lease = held_lease(embedded)
    assert lease is not None
    assert (lease.kind, lease.execution_arn) == ("restore", EXECUTION)
    other = invoke(embedded, "begin", execution_id=running(embedded, EXECUTION + "-other"))
    assert other["taken"] is False
    assert other["reason"] == f"not restored: a restore holds the cluster now: {EXECUTION}"


def test_the_plan_starts_the_dead_standby_and_counts_it_in_the_hour(embedded: Embedded) -> None:
    planned = invoke(embedded, "plan", **plan_event())
    assert planned["act"] is True
    [action] = planned["actions"]
    assert (action["controller"], action["kind"]) == ("ctl2", "start-slurmctld")
    assert action["node"] == node("ctl2").to_json()  # the probe's input for the check after
    document = embedded.stack.ref("RestoreSlurmctldDocument")
    assert action["command"].endswith(f"--document-name {document}")
    hour = int(dt.datetime.now(dt.UTC).timestamp()) // 3600
    table = embedded.stack.ref("StateTable")
    assert state_table.restore_actions(boto3.client("dynamodb"), table, "ml-cluster", hour) == 1


def test_after_restore_max_per_hour_actions_restoring_stops_and_says_why(embedded: Embedded) -> None:
    # RestoreMaxPerHour is 2 by default: the third plan in the hour takes nothing.
    for _ in range(2):
        assert invoke(embedded, "plan", **plan_event())["act"] is True
    third = invoke(embedded, "plan", **plan_event())
    assert third["act"] is False
    assert third["actions"] == []
    assert third["stopped"].startswith("restoring stopped: 2 restore actions on this cluster this hour")
    assert [a["controller"] for a in third["not_taken"]] == ["ctl2"]


def test_a_dry_run_counts_nothing_and_names_the_command(embedded: Embedded) -> None:
    planned = embedded.stack.invoke(
        "RestoreRedundancyFunction",
        {"action": "plan", "request": {**REQUEST, "dry_run": True}, **plan_event()},
    )
    assert planned["act"] is False
    assert "dry run: nothing started; aws ssm start-session" in planned["reasons"][-1]
    table = embedded.stack.ref("StateTable")
    hour = int(dt.datetime.now(dt.UTC).timestamp()) // 3600
    assert state_table.restore_actions(boto3.client("dynamodb"), table, "ml-cluster", hour) == 0


def test_a_rotation_rolling_out_blocks_the_restore(embedded: Embedded) -> None:
    boto3.client("secretsmanager").put_secret_value(
        SecretId=embedded.site.secret_arn,
        SecretString='{"username":"slurm_admin","password":"Next-Password-1"}',
        VersionStages=["AWSPENDING"],
    )
    planned = invoke(embedded, "plan", **plan_event())
    assert planned["act"] is False
    assert planned["blocked"] == (
        "not restored: a rotation of the database secret is rolling out "
        "(its AWSPENDING version is not current yet)"
    )


def test_a_rollout_started_by_hand_holds_the_cluster_and_the_restore_is_refused(embedded: Embedded) -> None:
    # An operator's {"action": "rollout"} leaves no AWSPENDING version: its lease is what is seen.
    from hyperpod_ha.rotation.lease import Invocation, RolloutLease

    function = "arn:aws:lambda:us-east-1:123456789012:function:hyperpod-ha-RotateDbSecretFunction"
    lease = RolloutLease(boto3.client("dynamodb"), embedded.stack.ref("StateTable"), "ml-cluster")
    held = lease.take("req-1", Invocation(function, "req-1", 900))

    refused = invoke(embedded, "begin", execution_id=EXECUTION)

    assert refused["taken"] is False
    assert refused["reason"] == f"not restored: a rollout holds the cluster now: {function}"
    assert held_lease(embedded) == held
    lease.release(held)  # the roll-out ends: the restore may go on
    assert invoke(embedded, "begin", execution_id=EXECUTION)["taken"] is True


def test_finish_records_the_restore_and_sends_one_notice(embedded: Embedded) -> None:
    planned = invoke(embedded, "plan", **plan_event())
    results = [
        {
            "controller": "ctl2",
            "kind": "start-slurmctld",
            "restored": True,
            "what": "ctl2: slurmctld runs, logged the standby role and answers ping",
            "command": planned["actions"][0]["command"],
        }
    ]
    done = invoke(embedded, "finish", plan=planned, results=results, execution_id=EXECUTION)
    assert (done["verify"], done["restored"], done["not_restored"]) == (True, ["ctl2"], [])
    record = StatusRecords(boto3.client("dynamodb"), embedded.stack.ref("StateTable")).read("ml-cluster")[
        "restore"
    ]
    assert record["mode"] == "standbys"
    assert record["actions"][0]["restored"] is True
    [message] = published(str(embedded.stack.outputs["NotificationTopicArn"]))
    assert message.attributes["kind"] == "restore-action"
    assert (
        message.subject == "[hyperpod-ha] ml-cluster: redundancy restored: slurmctld started on ctl2 (sev 4)"
    )


@pytest.mark.parametrize(
    "event",
    [
        {"action": "reboot"},
        {"action": "begin", "request": {"cluster": "ml-cluster; id"}, "execution_id": EXECUTION},
        {"action": "begin", "request": {"cluster": "other-cluster"}, "execution_id": EXECUTION},
        {
            "action": "begin",
            "request": {"cluster": "ml-cluster", "mode": "everything"},
            "execution_id": EXECUTION,
        },
        {"action": "plan", "request": REQUEST, "cluster": [], "reports": [], "execution_id": EXECUTION},
        {"action": "act", "request": REQUEST, "item": {"kind": "reboot"}},
        {"action": "check", "request": REQUEST, "item": {}, "report": {}, "checks": 99},
    ],
)
def test_a_bad_step_is_rejected_with_a_typed_error_and_changes_nothing(
    embedded: Embedded, event: dict[str, Any]
) -> None:
    with pytest.raises(FunctionError) as raised:
        embedded.stack.invoke("RestoreRedundancyFunction", event)
    assert raised.value.error_type == "InvalidRestoreRequest"
    assert held_lease(embedded) is None


def test_a_missing_setting_fails_the_first_step_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    app = load_function_module("restore_redundancy", fresh=True)
    monkeypatch.setenv("STATE_TABLE", "state")
    monkeypatch.setenv("CLUSTER_NAME", "ml-cluster")
    monkeypatch.setenv("CONTROLLER_GROUP", "controller-machine")
    monkeypatch.delenv("RESTORE_DOCUMENT", raising=False)
    context = LambdaContext(
        "RestoreRedundancyFunction", "arn:aws:lambda:us-east-1:123456789012:function:r", 256, 180
    )
    event = {"action": "begin", "request": REQUEST, "execution_id": EXECUTION}
    with pytest.raises(ConfigurationError, match="RESTORE_DOCUMENT"):
        app.lambda_handler(event, context)


def test_a_bad_mode_setting_fails_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    app = load_function_module("restore_redundancy", fresh=True)
    for name, value in {
        "STATE_TABLE": "state",
        "CLUSTER_NAME": "ml-cluster",
        "CONTROLLER_GROUP": "controller-machine",
        "RESTORE_DOCUMENT": "d",
        "STATE_MACHINE_ARN": "arn",
        "RESTORE_REDUNDANCY": "sometimes",
    }.items():
        monkeypatch.setenv(name, value)
    context = LambdaContext(
        "RestoreRedundancyFunction", "arn:aws:lambda:us-east-1:123456789012:function:r", 256, 180
    )
    with pytest.raises(ConfigurationError, match="RESTORE_REDUNDANCY"):
        app.lambda_handler({"action": "begin", "request": REQUEST, "execution_id": EXECUTION}, context)


# --- issue 35, finding 2: a direct invoke of a step outside a running restore ----------------


def forged_execution(embedded: Embedded, how: str) -> str:
    """The execution a direct invoke names, each way it is not a running restore of this stack."""
    if how == "an ended restore":
        ended = running(embedded, EXECUTION + "-ended")
        end_execution(ended, "ABORTED")
        return ended
    if how == "a drill's execution":
        drills = str(embedded.stack.outputs["FailoverDrillStateMachineArn"])
        return held_execution(drills, "r1", REQUEST)
    return {"no such execution": EXECUTION + "-forged", "not an execution ARN": "r1"}[how]


FORGED = ["no such execution", "an ended restore", "a drill's execution", "not an execution ARN"]


@pytest.mark.parametrize("how", FORGED)
def test_a_direct_finish_outside_a_running_restore_records_and_sends_nothing(
    embedded: Embedded, how: str
) -> None:
    planned = invoke(embedded, "plan", **plan_event())
    results = [{"controller": "ctl2", "kind": "start-slurmctld", "restored": False, "what": "forged"}]
    with pytest.raises(FunctionError) as raised:
        invoke(
            embedded, "finish", plan=planned, results=results, execution_id=forged_execution(embedded, how)
        )
    assert raised.value.error_type == "RestoreStepRefused"
    assert "nothing is recorded" in str(raised.value)
    table = embedded.stack.ref("StateTable")
    assert StatusRecords(boto3.client("dynamodb"), table).read("ml-cluster") == {}
    assert published(str(embedded.stack.outputs["NotificationTopicArn"])) == []


@pytest.mark.parametrize("how", FORGED)
def test_a_direct_begin_plan_or_verify_outside_a_running_restore_acts_on_nothing(
    embedded: Embedded, how: str
) -> None:
    execution = forged_execution(embedded, how)
    for action, event in (
        ("begin", {}),
        ("plan", plan_event()),  # would count an action in the hour
        ("verify", {}),  # would start a verification run
    ):
        with pytest.raises(FunctionError) as raised:
            invoke(embedded, action, **{**event, "execution_id": execution})
        assert raised.value.error_type == "RestoreStepRefused", action
    assert held_lease(embedded) is None
    hour = int(dt.datetime.now(dt.UTC).timestamp()) // 3600
    table = embedded.stack.ref("StateTable")
    assert state_table.restore_actions(boto3.client("dynamodb"), table, "ml-cluster", hour) == 0
    assert embedded.executions() == []  # no verification run


# --- issue 35, finding 2: a direct invoke of a step that acts ---------------------------------

RESTORED = "before=stopped\naction=started\nanswers_ping=yes\nHYPERPOD_HA_RESULT rc=0\n"
ALL = {"cluster": "ml-cluster", "mode": "all", "dry_run": False}


@pytest.fixture
def embedded_all() -> Iterator[Embedded]:
    """A stack that may reboot nodes (RestoreRedundancy=all, ClusterId set)."""
    with embedded_aws():
        site = create_site()
        site.extra_parameters.update({**FAST_RUNS, "RestoreRedundancy": "all", "ClusterId": "abcdef123456"})
        embedded = Embedded(site, create_stack(ROOT, site.stack_parameters()))
        running(embedded, EXECUTION, ALL)
        yield embedded
        embedded.stack.stop_running_executions()


@pytest.fixture
def runner(embedded: Embedded, use_transport: UseTransport) -> CannedRunner:
    """The restore document's transport: records every command, answers that slurmctld started."""
    canned = CannedRunner(result=CommandResult(RESTORED, "", 0, 1.0, "canned"), transport="canned")
    use_transport("canned", canned.factory)
    embedded.stack.override_environment("RestoreRedundancyFunction", COMMAND_TRANSPORT="canned")
    return canned


def discovered(embedded: Embedded) -> dict[str, Any]:
    found: dict[str, Any] = embedded.stack.invoke("DiscoverControllersFunction", {"cluster": "ml-cluster"})
    return found


def start_action(node: dict[str, Any], **changes: Any) -> dict[str, Any]:
    action = {
        "kind": "start-slurmctld",
        "controller": "ctl2",
        "index": 1,
        "instance_id": node["instance_id"],
        "target": node["target"],
        "why": "slurmctld not running",
        "command": "aws ssm start-session ...",
    }
    return {**action, **changes}


def test_act_starts_slurmctld_only_on_a_discovered_controller_of_its_restore(
    embedded: Embedded, runner: CannedRunner
) -> None:
    ctl2 = discovered(embedded)["controllers"][1]
    assert invoke(embedded, "begin", execution_id=EXECUTION)["taken"] is True
    done = invoke(embedded, "act", execution_id=EXECUTION, item=start_action(ctl2))
    assert done["started"] is True
    assert [r.target for r in runner.requests] == [ctl2["target"]]


@pytest.mark.parametrize(
    ("item", "execution", "reason"),
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
def test_a_direct_act_outside_its_restore_is_refused_and_runs_nothing(
    embedded: Embedded, runner: CannedRunner, item: dict[str, Any], execution: str, reason: str
) -> None:
    ctl2 = discovered(embedded)["controllers"][1]
    invoke(embedded, "begin", execution_id=EXECUTION)
    with pytest.raises(FunctionError) as raised:
        invoke(embedded, "act", execution_id=execution, item=start_action(ctl2, **item))
    assert raised.value.error_type == "RestoreStepRefused"
    assert reason in str(raised.value)
    assert runner.requests == []


def reboot_reports(embedded: Embedded) -> list[dict[str, Any]]:
    """ctl1 active (its ping sees ctl2 down), ctl2 not reached through SSM: as the run saw them."""
    ctl1, ctl2 = discovered(embedded)["controllers"]
    primary = Probe(ping=CTL2_DOWN_PING).report()
    unreached = Unreachable("ctl2").report()
    return [
        dataclasses.replace(primary, instance_id=ctl1["instance_id"], target=ctl1["target"]).to_json(),
        dataclasses.replace(unreached, instance_id=ctl2["instance_id"], target=ctl2["target"]).to_json(),
    ]


def reboot(embedded: Embedded, node: dict[str, Any], **changes: Any) -> dict[str, Any]:
    item = start_action(node, kind="reboot-node", **changes)
    result: dict[str, Any] = embedded.stack.invoke(
        "RestoreRedundancyFunction",
        {
            "action": "reboot",
            "request": ALL,
            "execution_id": EXECUTION,
            "item": item,
            "reports": reboot_reports(embedded),
        },
    )
    return result


def unreachable_for_the_minutes(embedded: Embedded, instance_id: str) -> None:
    """The watchdog's record: ``instance_id`` unreachable for RestoreUnreachableMinutes (15)."""
    aged = int(time.time()) - 15 * 60 - 1
    table = embedded.stack.ref("StateTable")
    state_table.mark_unreachable(
        boto3.client("dynamodb"), table, "ml-cluster", instance_id, aged, aged + 3600
    )


def test_the_planned_reboot_is_done_once_and_counted_in_the_hour(embedded_all: Embedded) -> None:
    ctl2 = discovered(embedded_all)["controllers"][1]
    unreachable_for_the_minutes(embedded_all, ctl2["instance_id"])
    embedded_all.stack.invoke(
        "RestoreRedundancyFunction", {"action": "begin", "request": ALL, "execution_id": EXECUTION}
    )
    assert reboot(embedded_all, ctl2)["rebooting"] == ctl2["instance_id"]
    assert rebooted_nodes("ml-cluster") == [ctl2["instance_id"]]
    hour = int(time.time()) // 3600
    table = embedded_all.stack.ref("StateTable")
    assert state_table.restore_actions(boto3.client("dynamodb"), table, "ml-cluster", hour) == 1


def test_a_direct_reboot_of_the_active_controller_or_a_worker_is_refused(embedded_all: Embedded) -> None:
    # The review's case: the active controller three times, then a worker; each recorded
    # unreachable long enough, the lease this restore's.
    ctl1 = discovered(embedded_all)["controllers"][0]
    worker = {
        "instance_id": "i-0f0f0f0f0f0f00001",
        "target": "sagemaker-cluster:x_worker-group-1-i-0f0f0f0f0f0f00001",
    }
    for instance_id in (ctl1["instance_id"], worker["instance_id"]):
        unreachable_for_the_minutes(embedded_all, instance_id)
    embedded_all.stack.invoke(
        "RestoreRedundancyFunction", {"action": "begin", "request": ALL, "execution_id": EXECUTION}
    )
    for target in (ctl1, ctl1, ctl1, worker):
        with pytest.raises(FunctionError) as raised:
            reboot(embedded_all, target, controller="ctl1" if target is ctl1 else "worker", index=0)
        assert raised.value.error_type == "RestoreStepRefused"
        why = (
            "it is the active controller" if target is ctl1 else "is not a controller of this stack's cluster"
        )
        assert why in str(raised.value)
    assert rebooted_nodes("ml-cluster") == []
    hour = int(time.time()) // 3600
    table = embedded_all.stack.ref("StateTable")
    assert state_table.restore_actions(boto3.client("dynamodb"), table, "ml-cluster", hour) == 0


def test_a_reboot_past_the_hours_bound_is_refused(embedded_all: Embedded) -> None:
    ctl2 = discovered(embedded_all)["controllers"][1]
    unreachable_for_the_minutes(embedded_all, ctl2["instance_id"])
    embedded_all.stack.invoke(
        "RestoreRedundancyFunction", {"action": "begin", "request": ALL, "execution_id": EXECUTION}
    )
    dynamodb, table = boto3.client("dynamodb"), embedded_all.stack.ref("StateTable")
    hour = int(time.time()) // 3600
    for _ in range(2):  # RestoreMaxPerHour (2) actions this hour already
        state_table.count_restore_action(dynamodb, table, "ml-cluster", hour, 2, expires_at=(hour + 2) * 3600)
    with pytest.raises(FunctionError) as raised:
        reboot(embedded_all, ctl2)
    assert raised.value.error_type == "RestoreStepRefused"
    assert "RestoreMaxPerHour=2" in str(raised.value)
    assert rebooted_nodes("ml-cluster") == []
