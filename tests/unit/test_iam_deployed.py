"""IAM and rules as a deployment with given parameters creates them: the template as SAM
translates it, its conditions evaluated and its values resolved. Session Manager's grants with and
without ClusterId (issue 35, item 9); the alarms NoticeFunction tells and the rule that sends them
(item 6)."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest

from hyperpod_ha_dev.embedded.sam import translate
from tests.conftest import ROOT
from tests.unit.test_iam import _listed

PSEUDO = {
    "AWS::Partition": "aws",
    "AWS::Region": "eu-west-1",
    "AWS::AccountId": "123456789012",
    "AWS::StackName": "ha",
    "AWS::URLSuffix": "amazonaws.com",
}


@cache
def _deployed(parameters: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """The resources a deployment with ``parameters`` creates (their conditions evaluated), every
    value resolved: a resource's Ref is ``<LogicalId>``, its attribute ``<LogicalId.Attribute>``."""
    from hyperpod_ha_dev.cfn import Context, Resolver, evaluate_conditions
    from hyperpod_ha_dev.embedded.sam import SAMPLE_PARAMETERS

    given = dict(parameters)
    template = translate(ROOT / "template.yaml", given)
    values = (
        {name: spec.get("Default", "") for name, spec in template.get("Parameters", {}).items()}
        | SAMPLE_PARAMETERS
        | given
    )
    conditions = evaluate_conditions(template, values)
    context = Context(values, PSEUDO, lambda name: f"<{name}>", lambda n, a: f"<{n}.{a}>", conditions)
    resolver = Resolver(template, context)
    created = {
        name: resource
        for name, resource in template["Resources"].items()
        if conditions.get(resource.get("Condition", ""), True)
    }
    resolved: dict[str, Any] = resolver.resolve(created)
    return resolved


def deployed(**parameters: str) -> dict[str, Any]:
    return _deployed(tuple(sorted(parameters.items())))


def _granted(resources: dict[str, Any], action: str) -> list[tuple[str, dict[str, Any]]]:
    """(role, statement) of every resolved inline statement allowing ``action``."""
    found = []
    for role, resource in resources.items():
        if resource["Type"] != "AWS::IAM::Role":
            continue
        for policy in resource["Properties"].get("Policies", []):
            for statement in _listed(policy["PolicyDocument"]["Statement"]):
                if statement.get("Effect") == "Allow" and action in _listed(statement["Action"]):
                    found.append((role, statement))
    return found


SESSION_ROLES = {
    "HealthCheckFunctionRole",
    "WatchdogFunctionRole",
    "FailoverDrillFunctionRole",
    "RestoreRedundancyFunctionRole",
    "RotateDbSecretFunctionRole",
}


@pytest.mark.parametrize("transport", ["session-manager", "run-command"])
def test_with_a_cluster_id_every_session_grant_names_that_cluster_only(transport: str) -> None:
    cluster = "arn:aws:sagemaker:eu-west-1:123456789012:cluster/abcdef123456"
    granted = _granted(deployed(ClusterId="abcdef123456", CommandTransport=transport), "ssm:StartSession")
    if transport == "run-command":
        assert granted == []
        return
    assert {role for role, _ in granted} == SESSION_ROLES
    for role, statement in granted:
        targets = [r for r in _listed(statement["Resource"]) if ":document/" not in r]
        assert targets == [cluster], role  # no other cluster, no instance of the account
        assert statement["Condition"] == {"BoolIfExists": {"ssm:SessionDocumentAccessCheck": "true"}}
        documents = [r for r in _listed(statement["Resource"]) if ":document/" in r]
        assert documents, role
        assert all(d.startswith("arn:aws:ssm:eu-west-1:123456789012:document/<") for d in documents), role


@pytest.mark.parametrize("transport", ["session-manager", "run-command"])
def test_without_a_cluster_id_sessions_keep_the_accounts_targets(transport: str) -> None:
    # The cluster's id, in its ARN, is unknown to the template then (docs/security.md says why).
    granted = _granted(deployed(CommandTransport=transport), "ssm:StartSession")
    if transport == "run-command":
        assert granted == []
        return
    assert {role for role, _ in granted} == SESSION_ROLES
    for role, statement in granted:
        targets = [r for r in _listed(statement["Resource"]) if ":document/" not in r]
        assert targets == [
            "arn:aws:sagemaker:eu-west-1:123456789012:cluster/*",
            "arn:aws:ec2:eu-west-1:123456789012:instance/*",
        ], role


@pytest.mark.parametrize("cluster_id", ["", "abcdef123456"])
def test_send_command_keeps_its_tag_condition_whatever_the_cluster_id(cluster_id: str) -> None:
    granted = _granted(deployed(ClusterId=cluster_id, CommandTransport="run-command"), "ssm:SendCommand")
    on_instances = [s for _, s in granted if any(":instance/" in r for r in _listed(s["Resource"]))]
    assert len(on_instances) == 3  # the probe (health check, watchdog) and the roll-out
    for statement in on_instances:
        assert statement["Condition"] == {
            "StringEquals": {"ssm:resourceTag/hyperpod-ha:cluster": "ml-cluster"}
        }


@pytest.mark.parametrize(("watchdog", "metrics"), [("5", "on"), ("5", "off"), ("0", "on")])
@pytest.mark.parametrize("paging", ["none", "pagerduty"])
def test_the_notice_function_tells_exactly_the_alarms_created_and_the_rule_passes_them(
    watchdog: str, metrics: str, paging: str
) -> None:
    from moto.events.models import EventPattern

    from hyperpod_ha_stack.alarms import NOTICE_PATH

    resources = deployed(WatchdogRateMinutes=watchdog, EarlyWarningMetrics=metrics, **_paging(paging))
    created = {name for name, r in resources.items() if r["Type"] == "AWS::CloudWatch::Alarm"}
    assert ("WatchdogErrorsAlarm" in created) is (watchdog != "0")
    assert ("PagingDeadLetterQueueAlarm" in created) is (paging != "none")
    told = resources["NoticeFunction"]["Properties"]["Environment"]["Variables"]["TOLD_ALARMS"]
    assert set(told.split(",")) == created - NOTICE_PATH
    (rule,) = [
        r["Properties"]["EventPattern"]
        for r in resources.values()
        if r["Type"] == "AWS::Events::Rule"
        and r["Properties"]["EventPattern"]["source"] == ["aws.cloudwatch"]
    ]
    pattern = EventPattern.load(json.dumps(rule))

    def passes(alarm: str) -> bool:
        arn = f"arn:aws:cloudwatch:eu-west-1:123456789012:alarm:{alarm}"
        event = {
            "account": "123456789012",
            "source": "aws.cloudwatch",
            "detail-type": "CloudWatch Alarm State Change",
            "resources": [arn],
            "detail": {"alarmName": alarm},
        }
        return bool(pattern.matches_event(event))

    # The rule passes every told alarm and none of the notice path's own; the function refuses
    # the rest of what the prefix lets through (tests/functions/test_notice.py).
    assert all(passes(f"ha.{name}") for name in created - NOTICE_PATH)
    assert not any(passes(f"ha.{name}") for name in NOTICE_PATH)
    assert len(json.dumps(rule)) < 2048  # EventBridge's default bound on a pattern


PAGING_SECRET = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:pagerduty-AbCdEf"


def _paging(service: str) -> dict[str, str]:
    if service == "none":
        return {}
    extra = {"PagingWebhookUrl": "https://hooks.example.com/x"} if service == "webhook" else {}
    return {"PagingService": service, "PagingSecretArn": PAGING_SECRET, **extra}


def test_without_paging_nothing_of_it_is_created() -> None:
    assert [name for name in deployed() if name.startswith("Paging")] == []


@pytest.mark.parametrize("service", ["pagerduty", "webhook"])
def test_each_pipe_role_reads_its_own_queue_and_calls_the_one_destination(service: str) -> None:
    resources = deployed(**_paging(service))
    assert {name for name in resources if name.startswith("Paging")} == {
        "PagingConnection",
        "PagingDestination",
        "PagingTriggerQueue",
        "PagingResolveQueue",
        "PagingDeadLetterQueue",
        "PagingQueuePolicy",
        "PagingTriggerSubscription",
        "PagingResolveSubscription",
        "PagingTriggerPipeRole",
        "PagingResolvePipeRole",
        "PagingTriggerPipe",
        "PagingResolvePipe",
        "PagingTriggerQueueAlarm",
        "PagingResolveQueueAlarm",
        "PagingDeadLetterQueueAlarm",
    }
    for pipe in ("Trigger", "Resolve"):
        role = resources[f"Paging{pipe}PipeRole"]["Properties"]
        (statement,) = _listed(role["AssumeRolePolicyDocument"]["Statement"])
        assert statement["Principal"] == {"Service": "pipes.amazonaws.com"}
        assert statement["Condition"] == {"StringEquals": {"aws:SourceAccount": "123456789012"}}
        (policy,) = role["Policies"]
        assert policy["PolicyDocument"]["Statement"] == [
            {
                "Effect": "Allow",
                "Action": ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"],
                "Resource": f"<Paging{pipe}Queue.Arn>",
            },
            {
                "Effect": "Allow",
                "Action": "events:InvokeApiDestination",
                "Resource": "<PagingDestination.Arn>",
            },
        ]
        assert resources[f"Paging{pipe}Pipe"]["Properties"]["RoleArn"] == f"<Paging{pipe}PipeRole.Arn>"
    # Only the notification topic may send to the paging queues.
    (statement,) = resources["PagingQueuePolicy"]["Properties"]["PolicyDocument"]["Statement"]
    assert statement["Principal"] == {"Service": "sns.amazonaws.com"}
    assert statement["Action"] == "sqs:SendMessage"
    assert statement["Condition"] == {"ArnEquals": {"aws:SourceArn": "<NotificationTopic>"}}


@pytest.mark.parametrize("service", ["pagerduty", "webhook"])
def test_the_key_comes_from_the_secret_only(service: str) -> None:
    connection = deployed(**_paging(service))["PagingConnection"]["Properties"]
    reference = "{{resolve:secretsmanager:" + PAGING_SECRET + "}}"
    assert connection["AuthParameters"]["ApiKeyAuthParameters"]["ApiKeyValue"] == reference
    body = connection["AuthParameters"].get("InvocationHttpParameters", {}).get("BodyParameters", [])
    if service == "pagerduty":
        assert body == [{"Key": "routing_key", "Value": reference, "IsValueSecret": True}]
    else:
        assert body == []


def test_a_resolution_goes_to_the_resolve_pipe_only_and_notices_to_neither() -> None:
    resources = deployed(**_paging("pagerduty"))
    trigger = resources["PagingTriggerSubscription"]["Properties"]["FilterPolicy"]
    resolve = resources["PagingResolveSubscription"]["Properties"]["FilterPolicy"]
    assert trigger["event"] == ["opened", "reminder"]
    assert resolve["event"] == ["resolved"]
    assert trigger["dedup_key"] == resolve["dedup_key"] == [{"exists": True}]
    template = resources["PagingResolvePipe"]["Properties"]["TargetParameters"]["InputTemplate"]
    assert '"event_action": "resolve"' in template
    assert "trigger" not in template


def test_each_function_describes_only_the_executions_of_its_own_state_machines() -> None:
    # Issue 35, finding 2: the drill's and the restore's steps (and the restore's note) ask Step
    # Functions whether their request's execution is a running one of their own state machine;
    # the abandoned-run clean-up reads the execution an event names. No other executions.
    resources = deployed()
    granted = {
        role: statement["Resource"] for role, statement in _granted(resources, "states:DescribeExecution")
    }
    executions = "arn:aws:states:eu-west-1:123456789012:execution"
    assert granted == {
        "FailoverDrillFunctionRole": f"{executions}:ha-failover-drill:*",
        "RestoreRedundancyFunctionRole": f"{executions}:ha-redundancy-restore:*",
        "IncidentFunctionRole": f"{executions}:ha-redundancy-restore:*",  # the restore's note
        # The execution an abandoned-run event names, of the stack's three state machines.
        "AbandonedRunFunctionRole": [
            f"{executions}:<{machine}.Name>:*"
            for machine in (
                "FailoverVerificationStateMachine",
                "FailoverDrillStateMachine",
                "RedundancyRestoreStateMachine",
            )
        ],
    }
    for function, variable, machine in (
        ("FailoverDrillFunction", "DRILL_STATE_MACHINE_ARN", "FailoverDrillStateMachine"),
        ("RestoreRedundancyFunction", "RESTORE_STATE_MACHINE_ARN", "RedundancyRestoreStateMachine"),
        ("IncidentFunction", "RESTORE_STATE_MACHINE_ARN", "RedundancyRestoreStateMachine"),
    ):
        name = resources[machine]["Properties"]["StateMachineName"]
        known = resources[function]["Properties"]["Environment"]["Variables"][variable]
        assert known == f"arn:aws:states:eu-west-1:123456789012:stateMachine:{name}"
        assert granted[f"{function}Role"] == f"{executions}:{name}:*"
