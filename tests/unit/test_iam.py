"""IAM as deployed: the template as SAM translates it, walked statement by statement."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest

from hyperpod_ha_dev.embedded.sam import translate
from tests.conftest import ROOT

READ_VERBS = ("Get", "Describe", "List", "BatchGet", "Query", "Scan")
# Write actions IAM only accepts on "*" and that take no condition narrowing them; each reason
# is repeated in docs/security.md's IAM table.
EXEMPT_ON_STAR = {
    "ssm:CancelCommand": "no resource type; granted only with CommandTransport=run-command",
    "logs:CreateLogDelivery": "vended-log delivery for the state machine: no resource type",
    "logs:UpdateLogDelivery": "vended-log delivery for the state machine: no resource type",
    "logs:DeleteLogDelivery": "vended-log delivery for the state machine: no resource type",
    "logs:PutResourcePolicy": "vended-log delivery for the state machine: no resource type",
}
WHOLE_TYPE = re.compile(r"(^\*$|:\*$|/\*$)")


@cache
def translated(transport: str) -> dict[str, Any]:
    return translate(ROOT / "template.yaml", {"CommandTransport": transport})


def _text(value: Any) -> str:
    """A resource as text: Fn::Sub's template, Ref/GetAtt as ``<name>``; Fn::If both branches."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and len(value) == 1:
        ((key, argument),) = value.items()
        if key == "Fn::Sub":
            return argument if isinstance(argument, str) else str(argument[0])
        if key == "Ref":
            return f"<{argument}>"
        if key == "Fn::GetAtt":
            return f"<{argument[0]}.{argument[1]}>"
    return json.dumps(value)


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def statements(template: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(role, statement) for every inline statement; Fn::If statements give their kept branch."""
    for role, resource in template["Resources"].items():
        if resource["Type"] != "AWS::IAM::Role":
            continue
        for policy in resource["Properties"].get("Policies", []):
            for statement in _listed(policy["PolicyDocument"]["Statement"]):
                if isinstance(statement, dict) and "Fn::If" in statement:
                    _, when_true, when_false = statement["Fn::If"]
                    for branch in (when_true, when_false):
                        if isinstance(branch, dict) and "Effect" in branch:
                            yield role, branch
                    continue
                yield role, statement


def conditional_statements(template: dict[str, Any], condition: str) -> list[tuple[str, dict[str, Any]]]:
    """Statements kept when ``condition`` is true (unconditional ones included)."""
    kept = []
    for role, resource in template["Resources"].items():
        if resource["Type"] != "AWS::IAM::Role":
            continue
        for policy in resource["Properties"].get("Policies", []):
            for statement in _listed(policy["PolicyDocument"]["Statement"]):
                if isinstance(statement, dict) and "Fn::If" in statement:
                    name, when_true, when_false = statement["Fn::If"]
                    chosen = when_true if name == condition else when_false
                    if name not in (condition, _other(condition)):
                        chosen = when_true  # optional features (an incident response plan): on
                    if isinstance(chosen, dict) and "Effect" in chosen:
                        kept.append((role, chosen))
                    continue
                kept.append((role, statement))
    return kept


def _other(condition: str) -> str:
    return {"UsesRunCommand": "UsesSessionManager", "UsesSessionManager": "UsesRunCommand"}[condition]


def _transport_condition(transport: str) -> str:
    return "UsesRunCommand" if transport == "run-command" else "UsesSessionManager"


def _actions(statement: dict[str, Any]) -> list[str]:
    return [str(action) for action in _listed(statement["Action"])]


def _is_write(action: str) -> bool:
    verb = action.split(":", 1)[1]
    return not verb.startswith(READ_VERBS)


@pytest.mark.parametrize("transport", ["session-manager", "run-command"])
def test_no_write_on_star_or_a_whole_type_without_a_condition(transport: str) -> None:
    offending = []
    for role, statement in statements(translated(transport)):
        if statement.get("Effect") != "Allow" or statement.get("Condition"):
            continue
        broad = [_text(r) for r in _listed(statement["Resource"]) if WHOLE_TYPE.search(_text(r))]
        if not broad:
            continue
        for action in _actions(statement):
            if _is_write(action) and action not in EXEMPT_ON_STAR:
                offending.append((role, action, broad))
    assert offending == []


@pytest.mark.parametrize("transport", ["session-manager", "run-command"])
def test_grants_only_for_the_configured_transport(transport: str) -> None:
    kept = conditional_statements(translated(transport), _transport_condition(transport))
    actions = {action for _, statement in kept for action in _actions(statement)}
    run_command = {"ssm:SendCommand", "ssm:GetCommandInvocation", "ssm:CancelCommand"}
    session = {"ssm:StartSession", "ssm:TerminateSession", "ssm:ResumeSession"}
    if transport == "run-command":
        assert run_command <= actions
        assert not actions & session
    else:
        assert session <= actions
        assert not actions & run_command


def test_the_functions_run_only_this_stacks_documents() -> None:
    allowed = {
        "ControllerProbeDocument",
        "SlurmdbdRolloutDocument",
        "ControllerProbeCommandDocument",
        "SlurmdbdRolloutCommandDocument",
        # The drill's own Session documents (issue 15): FailoverDrillFunction runs only these.
        "FailoverDrillTakeoverDocument",
        "FailoverDrillJobsDocument",
        "FailoverDrillAccountingDocument",
        # The restore's one Session document (issue 24): RestoreRedundancyFunction runs only it.
        "RestoreSlurmctldDocument",
        # The Slurm triggers' install and list (issue 37): WatchdogFunction runs only it.
        "SlurmTriggersDocument",
        "SlurmTriggersCommandDocument",
    }
    for transport in ("session-manager", "run-command"):
        for role, statement in statements(translated(transport)):
            if not set(_actions(statement)) & {"ssm:StartSession", "ssm:SendCommand"}:
                continue
            for resource in map(_text, _listed(statement["Resource"])):
                if ":document/" in resource:
                    name = resource.rsplit("/", 1)[1]
                    assert name.strip("${}") in allowed, (role, resource)
    text = json.dumps(translated("run-command"))
    assert "AWS-RunShellScript" not in text
    assert "AWS-StartNonInteractiveCommand" not in text


def test_send_command_reaches_only_tagged_controllers() -> None:
    for _, statement in statements(translated("run-command")):
        if "ssm:SendCommand" not in _actions(statement):
            continue
        resources = [_text(r) for r in _listed(statement["Resource"])]
        if any(":document/" in r for r in resources):
            assert all(":document/" in r for r in resources)  # documents and targets apart
        else:
            tag = statement["Condition"]["StringEquals"]["ssm:resourceTag/hyperpod-ha:cluster"]
            assert tag == {"Ref": "ClusterName"}


def test_sessions_end_or_resume_only_when_this_role_started_them() -> None:
    found = 0
    for _, statement in statements(translated("session-manager")):
        if {"ssm:TerminateSession", "ssm:ResumeSession"} & set(_actions(statement)):
            found += 1
            assert statement["Condition"] == {
                "StringEquals": {"ssm:resourceTag/aws:ssmmessages:session-id": "${aws:userid}"}
            }
    # the health check, the watchdog, the roll-out, the drill (takeover and jobs), the restore
    assert found == 5


def test_backups_are_tagged_for_this_stack_and_cluster_and_only_those_are_deleted() -> None:
    by_action: dict[str, dict[str, Any]] = {}
    for _, statement in statements(translated("session-manager")):
        for action in _actions(statement):
            if action.startswith("fsx:") and _is_write(action):
                by_action[action] = statement
    tag_on_create = by_action["fsx:TagResource"]
    assert by_action["fsx:CreateBackup"] is tag_on_create  # tags only with a create's conditions
    request = tag_on_create["Condition"]["StringEquals"]
    assert request == {
        "aws:RequestTag/created-by": "hyperpod-ha",
        "aws:RequestTag/stack": {"Ref": "AWS::StackName"},
        "aws:RequestTag/cluster": {"Ref": "ClusterName"},
    }
    assert "aws:TagKeys" in tag_on_create["Condition"]["ForAllValues:StringEquals"]
    assert by_action["fsx:DeleteBackup"]["Condition"]["StringEquals"] == {
        "aws:ResourceTag/created-by": "hyperpod-ha",
        "aws:ResourceTag/stack": {"Ref": "AWS::StackName"},
        "aws:ResourceTag/cluster": {"Ref": "ClusterName"},
    }


def test_ops_items_are_created_tagged_and_only_ours_are_updated() -> None:
    for _, statement in statements(translated("session-manager")):
        actions = set(_actions(statement))
        if "ssm:CreateOpsItem" in actions:
            assert statement["Condition"]["StringEquals"]["aws:RequestTag/cluster"] == {"Ref": "ClusterName"}
        if "ssm:UpdateOpsItem" in actions:
            assert statement["Condition"]["StringEquals"]["aws:ResourceTag/cluster"] == {"Ref": "ClusterName"}


def test_the_security_page_iam_table_names_every_statement() -> None:
    page = (ROOT / "docs" / "security.md").read_text()
    table = page[page.index("## IAM, statement by statement") :]
    table = table[: table.index("\n\n", table.index("| --- |"))]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    missing = []
    for transport in ("session-manager", "run-command"):
        for role, statement in statements(translated(transport)):
            function = role.removesuffix("Role")
            for action in _actions(statement):
                if not any(function in row and action in row for row in rows):
                    missing.append((function, action))
    assert sorted(set(missing)) == []


def test_every_checkov_skip_is_listed_once_with_its_reason() -> None:
    lines = (ROOT / ".checkov.yaml").read_text().splitlines()
    listed = lines[lines.index("skip-check:") + 1 :]
    skipped = [line.strip()[2:] for line in listed if line.strip().startswith("- ")]
    assert skipped
    assert len(skipped) == len(set(skipped))
    for position, line in enumerate(listed):
        if line.strip().startswith("- "):
            assert listed[position - 1].strip().startswith("#"), f"{line.strip()} has no reason above it"


# --- issue 22, item 7: each grant names this stack's own resources, not a prefix or a type ----


def _sub(value: Any, **names: str) -> str:
    """A ``Fn::Sub`` (or plain string) with ``names`` filled in for ``${name}``."""
    text = value["Fn::Sub"] if isinstance(value, dict) else value
    assert isinstance(text, str), value
    for name, filled in names.items():
        text = text.replace("${" + name + "}", filled)
    return text


def test_only_secrets_manager_rotating_this_stacks_secret_invokes_the_rotation() -> None:
    permission = translated("session-manager")["Resources"]["RotateDbSecretPermission"]["Properties"]
    assert permission["Principal"] == "secretsmanager.amazonaws.com"
    assert permission["SourceAccount"] == {"Ref": "AWS::AccountId"}
    assert permission["SourceArn"] == {"Ref": "DbSecretArn"}


@pytest.mark.parametrize("document", ["SlurmdbdRolloutDocument", "SlurmdbdRolloutCommandDocument"])
def test_both_rollout_documents_admit_only_this_stacks_secret(document: str) -> None:
    from hyperpod_ha.rotation.rollout_document import secret_arn_pattern
    from hyperpod_ha_dev.cfn import Context, Resolver

    template = translated("run-command")
    spec = template["Resources"][document]["Properties"]["Content"]["parameters"]["secretId"]
    arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:slurm.db+x-AbCdEf"
    context = Context(
        parameters={"DbSecretArn": arn}, pseudo={}, ref=lambda n: n, get_att=lambda *a: a, conditions={}
    )
    pattern = Resolver(template, context).resolve(spec["allowedPattern"])
    assert pattern == secret_arn_pattern(arn)
    assert re.fullmatch(pattern, arn)
    for other in (arn.replace("123456789012", "210987654321"), arn[:-1] + "x", arn + "x"):
        assert not re.fullmatch(pattern, other), other


def test_only_the_notice_paths_alarms_publish_to_the_notification_topic() -> None:
    resources = translated("session-manager")["Resources"]
    statements_ = resources["NotificationTopicPolicy"]["Properties"]["PolicyDocument"]["Statement"]
    # No EventBridge rule publishes: rotation failures and alarm changes go through NoticeFunction.
    assert [s["Principal"] for s in statements_] == [{"Service": "cloudwatch.amazonaws.com"}]
    (alarms_statement,) = statements_
    names = {"AWS::Partition": "aws", "AWS::Region": "eu-west-1", "AWS::AccountId": "123456789012"}
    allowed = {
        _sub(arn, **names, **{"AWS::StackName": "ha"})
        for arn in alarms_statement["Condition"]["ArnEquals"]["aws:SourceArn"]
    }
    alarms = {k: v for k, v in resources.items() if v["Type"] == "AWS::CloudWatch::Alarm"}
    assert alarms
    publishing = set()
    for logical_id, alarm in alarms.items():
        name = _sub(alarm["Properties"]["AlarmName"], **{"AWS::StackName": "ha"})
        assert name == f"ha.{logical_id}"
        if alarm["Properties"].get("AlarmActions"):
            publishing.add(f"arn:aws:cloudwatch:eu-west-1:123456789012:alarm:{name}")
    assert publishing == allowed
    assert len(allowed) == 3


def test_the_alarm_rule_takes_this_stacks_alarms_but_the_notice_paths_own() -> None:
    resources = translated("session-manager")["Resources"]
    (rule,) = [
        r["Properties"]["EventPattern"]
        for r in resources.values()
        if r["Type"] == "AWS::Events::Rule"
        and r["Properties"]["EventPattern"]["source"] == ["aws.cloudwatch"]
    ]
    names = {"AWS::Partition": "aws", "AWS::Region": "eu-west-1", "AWS::AccountId": "123456789012"}
    (prefix,) = rule["resources"]
    assert _sub(prefix["prefix"], **names, **{"AWS::StackName": "ha"}) == (
        "arn:aws:cloudwatch:eu-west-1:123456789012:alarm:ha."
    )
    (excluded,) = rule["detail"]["alarmName"]
    assert {_sub(name, **{"AWS::StackName": "ha"}) for name in excluded["anything-but"]} == {
        "ha.NoticeErrorsAlarm",
        "ha.NoticeThrottlesAlarm",
        "ha.NoticeDeadLetterQueueAlarm",
    }


def test_the_dead_letter_queues_admit_exactly_the_rules_that_deliver_to_them() -> None:
    resources = translated("session-manager")["Resources"]
    policies = {
        k: v
        for k, v in resources.items()
        if v["Type"] == "AWS::SQS::QueuePolicy"
        and k != "PagingQueuePolicy"  # SNS's: tested in test_iam_deployed
    }
    assert len(policies) == 3
    for policy in policies.values():
        (queue,) = [q["Ref"] for q in policy["Properties"]["Queues"]]
        (statement,) = policy["Properties"]["PolicyDocument"]["Statement"]
        allowed = _listed(statement["Condition"]["ArnEquals"]["aws:SourceArn"])
        delivering = sorted(
            name
            for name, rule in resources.items()
            if rule["Type"] == "AWS::Events::Rule"
            and any(
                target.get("DeadLetterConfig", {}).get("Arn") == {"Fn::GetAtt": [queue, "Arn"]}
                for target in rule["Properties"].get("Targets", [])
            )
        )
        assert delivering
        assert sorted(a["Fn::GetAtt"][0] for a in allowed) == delivering
        assert all(a["Fn::GetAtt"][1] == "Arn" for a in allowed)


def test_every_rule_takes_only_this_accounts_events() -> None:
    resources = translated("session-manager")["Resources"]
    rules = [
        rule["Properties"]["EventPattern"]
        for rule in resources.values()
        if rule["Type"] == "AWS::Events::Rule"
    ]
    assert len(rules) == 5
    for pattern in rules:
        assert pattern["account"] == [{"Ref": "AWS::AccountId"}]


def test_state_table_writes_by_key_touch_only_this_clusters_keys() -> None:
    from fnmatch import fnmatchcase

    from hyperpod_ha import state_table
    from hyperpod_ha.incidents.advisory_notices import advisory_event_id

    cluster = "c1"
    advisory = {"advisory": "slurm-security-2026-09", "releases": ["24.11.5"]}
    written_by_code = {
        state_table.lease_key(cluster),
        state_table.notice_key(cluster, "event-1"),
        state_table.notice_key(cluster, advisory_event_id(advisory)),
        state_table.watchdog_key(cluster),
        state_table.reminder_key(cluster, "oi-0123456789ab"),
        state_table.redundancy_key(cluster),
    }
    foreign = {
        state_table.redundancy_key("other"),
        state_table.lease_key("c1-x"),
        state_table.lease_key("other"),
        state_table.notice_key("other", "event-1"),
        state_table.reminder_key("other", "oi-0123456789ab"),
        state_table.status_key(cluster, "verdict"),
        state_table.workers_key(cluster, 60),
    }
    found: dict[str, int] = {}
    for transport in ("session-manager", "run-command"):
        for role, statement in statements(translated(transport)):
            if "dynamodb:DeleteItem" not in _actions(statement):
                continue
            if statement["Resource"] != {"Fn::GetAtt": ["StateTable", "Arn"]}:
                continue
            keys = [
                _sub(k, ClusterName=cluster)
                for k in _listed(statement["Condition"]["ForAllValues:StringLike"]["dynamodb:LeadingKeys"])
            ]
            first = "lease" if any(fnmatchcase(state_table.lease_key(cluster), k) for k in keys) else keys[0]
            found[first.split("#")[0]] = found.get(first.split("#")[0], 0) + 1
            for pk in foreign:
                assert not any(fnmatchcase(pk, k) for k in keys), (role, pk)
            for k in keys:
                assert any(fnmatchcase(pk, k) for pk in written_by_code), (role, k)
    # Releasing the lease: controller status, node events, watchdog, abandoned runs, the drill,
    # the restore, the roll-out, the three state machines; a notice told once: NoticeFunction and
    # IncidentFunction (a known-bad release's); reminders: every function that opens incidents
    # (IncidentFunction, AbandonedRun, the drill, the rotation). Per transport.
    assert found == {"lease": 2 * 10, "notice": 2 * 2, "reminder": 2 * 4}
