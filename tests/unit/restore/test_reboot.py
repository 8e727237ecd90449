"""The reboot of a controller's node (``reboot-node``): planned only with ``all``, only after
RestoreUnreachableMinutes, never for the active controller nor for one whose slurmctld answers
ping, counted in the hourly bound; BatchRebootClusterNodes on botocore's Stubber (moto lacks
it); the check after the reboot starts slurmctld once; the watchdog's record of since when."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from hyperpod_ha.controllers.models import ControllerReport, ReportStatus
from hyperpod_ha.restore import steps
from hyperpod_ha.restore.errors import InvalidRestoreRequest, RestoreCommandFailed
from hyperpod_ha.restore.models import RestoreAction, RestorePlan
from hyperpod_ha.restore.planner import RestoreInput, plan_restore
from hyperpod_ha.restore.reboot import reboot_command, reboot_node
from hyperpod_ha.restore.settings import RestoreMode
from hyperpod_ha.restore.steps import judge
from hyperpod_ha.watchdog.unreachable_nodes import unreachable_nodes
from tests.unit.verdict.cases.verdict_probes import STANDBY, Probe, Unreachable, node

DOCUMENT = "hyperpod-ha-RestoreSlurmctldDocument-abc"
CLUSTER = "ml-cluster"
CTL2 = "i-0a1b2c3d4e5f60002"  # BatchRebootClusterNodes' NodeIds pattern: i- and 17 hex digits
NOW = 1_800_000_000.0
MINUTES = 15
PRIMARY = Probe(ping="Slurmctld(primary) at ctl1 is UP\nSlurmctld(backup) at ctl2 is DOWN")
# The active controller's ping still reaches ctl2's slurmctld: only SSM fails there.
PRIMARY_PINGS_CTL2 = Probe()


def unreached_ctl2() -> ControllerReport:
    report = Unreachable("ctl2").report()
    assert report.status is ReportStatus.UNREACHABLE
    target = f"sagemaker-cluster:hplab0000001_controller-machine-{CTL2}"
    return dataclasses.replace(report, instance_id=CTL2, target=target)


def plan(
    mode: RestoreMode = RestoreMode.ALL,
    since: float | None = NOW - MINUTES * 60,
    primary: Probe = PRIMARY,
    **given: Any,
) -> RestorePlan:
    result = plan_restore(
        RestoreInput(
            mode,
            [primary.report(), unreached_ctl2()],
            DOCUMENT,
            cluster=CLUSTER,
            now=NOW,
            unreachable_since={} if since is None else {CTL2: int(since)},
            unreachable_seconds=MINUTES * 60,
            **given,
        )
    )
    assert json.loads(json.dumps(result.to_json()))["mode"] == mode.value
    return result


COMMAND = f"aws sagemaker batch-reboot-cluster-nodes --cluster-name {CLUSTER} --node-ids {CTL2}"


def test_all_reboots_a_node_unreachable_for_the_minutes() -> None:
    result = plan()
    assert result.verdict == "HEALTHY"  # ctl1 serves; ctl2 is not a ready standby
    [action] = result.actions
    assert (action.kind, action.controller, action.index, action.instance_id) == (
        "reboot-node",
        "ctl2",
        1,
        CTL2,
    )
    assert action.command == COMMAND
    assert action.why.startswith("not reachable through SSM (")
    assert "for 15 min, its node Running" in action.why
    assert result.reasons[0].startswith(f"restoring: reboot the node {CTL2} of ctl2 (")
    assert RestoreAction.from_json(json.loads(json.dumps(action.to_json()))) == action


@pytest.mark.parametrize("since", [None, NOW - MINUTES * 60 + 1, NOW])
def test_not_before_the_minutes_have_passed(since: float | None) -> None:
    result = plan(since=since)
    assert result.actions == ()
    assert result.not_taken == ()
    [note] = [r for r in result.reasons if r.startswith("ctl2:")]
    assert f"RestoreUnreachableMinutes={MINUTES}" in note
    assert note.endswith(COMMAND)


@pytest.mark.parametrize(
    ("mode", "held"),
    [(RestoreMode.STANDBYS, "RestoreRedundancy=standbys"), (RestoreMode.OFF, "RestoreRedundancy is off")],
)
def test_standbys_and_off_only_name_the_exact_command(mode: RestoreMode, held: str) -> None:
    result = plan(mode=mode)
    assert result.actions == ()
    assert [(a.kind, a.instance_id) for a in result.not_taken] == [("reboot-node", CTL2)]
    [reason] = [r for r in result.reasons if held in r]
    assert reason.endswith(COMMAND)


def test_a_stack_without_the_grant_only_names_the_command() -> None:
    why = "the stack's ClusterId is empty: no grant to reboot nodes (set it to reboot them)"
    result = plan(cannot_reboot=why)
    assert result.actions == ()
    assert any(
        r.startswith(f"the node of ctl2 is not rebooted ({why}") and r.endswith(COMMAND)
        for r in result.reasons
    )


# The active controller's ping names no line for ctl2, or nothing at all: no proof it is down.
PRIMARY_SILENT_ON_CTL2 = Probe(ping="Slurmctld(primary) at ctl1 is UP")


@pytest.mark.parametrize("primary", [PRIMARY_PINGS_CTL2, PRIMARY_SILENT_ON_CTL2], ids=["answers", "no line"])
def test_never_a_node_whose_slurmctld_is_not_shown_down(primary: Probe) -> None:
    result = plan(primary=primary)
    assert result.actions == ()
    assert "ctl2: not reachable through SSM" in result.reasons[-1]
    assert result.reasons[-1].endswith("but no check shows its slurmctld down: not rebooted")


@pytest.mark.parametrize(
    "reason",
    [
        "AccessDenied: not authorized to perform ssm:StartSession",
        "ProtocolError: the agent closed the connection",
        "SessionEndedByService: idle timeout",
        None,
    ],
)
def test_a_failure_on_this_side_never_reboots_the_node(reason: str | None) -> None:
    result = plan_restore(
        RestoreInput(
            RestoreMode.ALL,
            [PRIMARY.report(), dataclasses.replace(unreached_ctl2(), reason=reason)],
            DOCUMENT,
            cluster=CLUSTER,
            now=NOW,
            unreachable_since={CTL2: int(NOW) - MINUTES * 60},
            unreachable_seconds=MINUTES * 60,
        )
    )
    assert result.actions == ()
    assert result.reasons[-1].endswith("a failure on this side, not the node's: not rebooted")


def test_never_the_active_controller() -> None:
    # ctl1 unreachable through SSM while it serves: exactly one active controller is required,
    # and it must be checked (its StateSaveLocation writable): nothing is planned at all.
    ctl1 = dataclasses.replace(Unreachable("ctl1").report(), instance_id="i-0a1b2c3d4e5f60001")
    result = plan_restore(
        RestoreInput(
            RestoreMode.ALL,
            [ctl1, STANDBY.report()],
            DOCUMENT,
            cluster=CLUSTER,
            now=NOW,
            unreachable_since={"i-0a1b2c3d4e5f60001": int(NOW) - 86_400},
        )
    )
    assert result.actions == ()
    assert result.blocked is not None


def test_a_probe_that_failed_on_a_reached_node_is_not_rebooted() -> None:
    failed = dataclasses.replace(unreached_ctl2(), status=ReportStatus.PROBE_FAILED, reason="output cut off")
    result = plan_restore(
        RestoreInput(
            RestoreMode.ALL,
            [PRIMARY.report(), failed],
            DOCUMENT,
            cluster=CLUSTER,
            now=NOW,
            unreachable_since={CTL2: int(NOW) - 86_400},
        )
    )
    assert result.actions == ()
    assert "ctl2: could not be checked (output cut off); not restored" in result.reasons


def test_a_reboot_is_counted_in_the_hourly_bound() -> None:
    result = plan(used_this_hour=2, max_per_hour=2)
    assert result.actions == ()
    assert [a.kind for a in result.not_taken] == ["reboot-node"]
    assert result.stopped is not None
    assert "RestoreMaxPerHour=2" in result.stopped
    assert [a.kind for a in plan(used_this_hour=1, max_per_hour=2).actions] == ["reboot-node"]


def test_a_reboot_action_names_an_instance_id() -> None:
    action = plan().actions[0].to_json()
    for bad in ({**action, "instance_id": "i-0ctl2"}, {**action, "instance_id": "ctl2"}):
        with pytest.raises(InvalidRestoreRequest):
            RestoreAction.from_json(bad)


# --- BatchRebootClusterNodes (botocore's Stubber: its service model checks the request) -----


def stubbed() -> tuple[Any, Stubber]:
    sagemaker = boto3.client(
        "sagemaker", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b"
    )
    return sagemaker, Stubber(sagemaker)


def test_reboot_node_asks_for_that_one_node() -> None:
    sagemaker, stub = stubbed()
    stub.add_response(
        "batch_reboot_cluster_nodes",
        {"Successful": [CTL2], "Failed": []},
        {"ClusterName": CLUSTER, "NodeIds": [CTL2]},
    )
    with stub:
        assert reboot_node(sagemaker, CLUSTER, CTL2) == {"rebooting": CTL2}
    stub.assert_no_pending_responses()


def test_a_node_hyperpod_did_not_reboot_is_a_failed_action() -> None:
    sagemaker, stub = stubbed()
    failed = {"NodeId": CTL2, "ErrorCode": "InvalidInstanceStatus", "Message": "node is being replaced"}
    stub.add_response(
        "batch_reboot_cluster_nodes", {"Failed": [failed]}, {"ClusterName": CLUSTER, "NodeIds": [CTL2]}
    )
    stub.add_client_error(
        "batch_reboot_cluster_nodes", "AccessDeniedException", "not authorized", expected_params=None
    )
    with stub:
        with pytest.raises(RestoreCommandFailed, match="InvalidInstanceStatus: node is being replaced"):
            reboot_node(sagemaker, CLUSTER, CTL2)
        with pytest.raises(RestoreCommandFailed, match="refused: AccessDeniedException: not authorized"):
            reboot_node(sagemaker, CLUSTER, CTL2)


def test_a_botocore_without_the_operation_is_a_failed_action() -> None:
    with pytest.raises(RestoreCommandFailed, match="botocore has no BatchRebootClusterNodes"):
        reboot_node(object(), CLUSTER, CTL2)  # type: ignore[arg-type]


def test_the_operators_command_is_quoted() -> None:
    assert reboot_command("ml cluster", CTL2) == (
        f"aws sagemaker batch-reboot-cluster-nodes --cluster-name 'ml cluster' --node-ids {CTL2}"
    )


# --- after the reboot ---------------------------------------------------------------------


def reboot_action(index: int = 1) -> RestoreAction:
    return dataclasses.replace(plan().actions[0], index=index)


def test_a_rebooted_node_is_waited_for_then_started_once_then_restored() -> None:
    action = reboot_action()
    dead = Probe(name="ctl2", slurmctld=None, log="slurmctld_log_ctl2_standby.txt").report()
    assert judge(action, unreached_ctl2(), registered=False, started=False)[0] == "waiting"
    assert judge(action, dead, registered=False, started=False) == (
        "start",
        "ctl2: reached after the reboot, slurmctld not running: starting it",
    )
    assert judge(action, dead, registered=False, started=True)[0] == "waiting"  # started once only
    assert judge(action, STANDBY.report(), registered=False, started=False)[0] == "restored"


def test_the_start_after_a_reboot_gets_checks_of_its_own() -> None:
    # Reached on the last check allowed after the reboot: the start is still checked in full.
    dead = Probe(name="ctl2", slurmctld=None, log="slurmctld_log_ctl2_standby.txt").report()
    event = {
        "item": reboot_action().to_json(),
        "report": dead.to_json(),
        "checks": 5,
        "max_checks": 6,
        "registered": False,
        "started": None,
    }
    assert {k: v for k, v in steps.check(event, None).items() if k != "what"} == {  # type: ignore[arg-type]
        "next": "start",
        "checks": 0,
        "controller": "ctl2",
    }


def test_a_standby_restart_never_starts_twice() -> None:
    standby = dataclasses.replace(reboot_action(), kind="start-slurmctld")
    dead = Probe(name="ctl2", slurmctld=None, log="slurmctld_log_ctl2_standby.txt").report()
    assert judge(standby, dead, registered=False)[0] == "waiting"


def test_the_watchdog_records_only_nodes_ssm_could_not_reach() -> None:
    not_running = dataclasses.replace(
        unreached_ctl2(), instance_id="i-0a1b2c3d4e5f60003", status=ReportStatus.NOT_RUNNING
    )
    assert unreachable_nodes([PRIMARY.report(), unreached_ctl2(), not_running]) == {CTL2}
    assert node("ctl1").instance_id not in unreachable_nodes([PRIMARY.report()])


# --- the stack's grant --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "cluster_id", "why"),
    [
        ("all", "abcdef123456", None),
        ("all", "", "the stack's ClusterId is empty: no grant to reboot nodes (set it to reboot them)"),
        (
            "standbys",
            "abcdef123456",
            "the stack's RestoreRedundancy is standbys, not all: no grant to reboot nodes",
        ),
    ],
)
def test_only_a_stack_with_all_and_its_cluster_id_may_reboot(
    mode: str, cluster_id: str, why: str | None
) -> None:
    from hyperpod_ha.restore.function import RestoreRedundancyFunctionSettings
    from tests.conftest import ROOT

    env = json.loads((ROOT / "events" / "env.json").read_text())["RestoreRedundancyFunction"]
    settings = RestoreRedundancyFunctionSettings.read(
        {**env, "RESTORE_REDUNDANCY": mode, "CLUSTER_ID": cluster_id}
    )
    assert settings.restore.cannot_reboot == why


def test_the_reboot_is_granted_only_with_all_on_this_clusters_arn() -> None:
    from tests.unit.test_iam import translated

    template = translated("session-manager")
    role = template["Resources"]["RestoreRedundancyFunctionRole"]
    found = [
        statement["Fn::If"]
        for policy in role["Properties"]["Policies"]
        for statement in policy["PolicyDocument"]["Statement"]
        if "BatchRebootClusterNodes" in json.dumps(statement)
    ]
    [(condition, granted, otherwise)] = found
    assert (condition, otherwise) == ("RebootsNodes", {"Ref": "AWS::NoValue"})
    assert granted["Action"] == "sagemaker:BatchRebootClusterNodes"
    assert granted["Resource"] == {
        "Fn::Sub": "arn:${AWS::Partition}:sagemaker:${AWS::Region}:${AWS::AccountId}:cluster/${ClusterId}"
    }
    assert template["Conditions"]["RebootsNodes"] == {
        "Fn::And": [
            {"Fn::Equals": [{"Ref": "RestoreRedundancy"}, "all"]},
            {"Fn::Not": [{"Fn::Equals": [{"Ref": "ClusterId"}, ""]}]},
        ]
    }
    # No other role may reboot nodes.
    others = {
        name
        for name, resource in template["Resources"].items()
        if resource["Type"] == "AWS::IAM::Role" and "BatchRebootClusterNodes" in json.dumps(resource)
    }
    assert others == {"RestoreRedundancyFunctionRole"}
