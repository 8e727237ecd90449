"""RestoreRedundancyFunction's steps on the embedded stack: the lease, the plan with its
guards that need AWS (a roll-out in progress, the hourly bound counted in the table), the
record and its notice, bad input and a bad setting."""

from __future__ import annotations

import datetime as dt
from typing import Any

import boto3
import pytest

from hyperpod_ha import state_table
from hyperpod_ha.errors import ConfigurationError
from hyperpod_ha.lease import Lease
from hyperpod_ha.status_records import StatusRecords
from hyperpod_ha_dev.embedded.functions import FunctionError, LambdaContext
from tests.conftest import Embedded, load_function_module, published
from tests.unit.verdict.cases.verdict_probes import Probe, node

EXECUTION = "arn:aws:states:us-east-1:123456789012:execution:hyperpod-ha-redundancy-restore:r1"
REQUEST = {"cluster": "ml-cluster", "mode": "standbys", "dry_run": False}
CTL2_DOWN_PING = "Slurmctld(primary) at ctl1 is UP\nSlurmctld(backup) at ctl2 is DOWN"


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
    other = invoke(embedded, "begin", execution_id=EXECUTION + "-other")
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
        {"action": "plan", "request": REQUEST, "cluster": [], "reports": []},
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
