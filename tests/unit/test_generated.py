"""The generated parts: written from one description each, and what a new entry makes of them."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from hyperpod_ha_stack.alarms import alarms
from hyperpod_ha_stack.command_documents import COMMAND_DOCUMENTS, command_document_resource
from hyperpod_ha_stack.dashboard import WIDGETS, Widget, dashboard_resource, ours, places
from hyperpod_ha_stack.settings_checks import DRILL, RESTORE, SETTINGS_CHECKS, VERIFICATION, number
from hyperpod_ha_stack.template import TemplateError, find_in_map, load_template, parse_template
from hyperpod_ha_stack.template_tail import MARKER, hand_written, tail
from tests.conftest import ROOT

TEXT = (ROOT / "template.yaml").read_text()
TEMPLATE = load_template(ROOT / "template.yaml")


def generated_with(extra: str) -> dict[str, Any]:
    """The generated resources when ``extra`` (resources, indented) is added to the hand-written part."""
    text = hand_written(TEXT) + extra + "\n"
    return dict(parse_template(text + tail(text + MARKER + "\n"))["Resources"])


def test_a_new_function_gets_its_errors_and_throttles_alarms_with_its_condition() -> None:
    extra = "  ExtraFunction:\n    Type: AWS::Serverless::Function\n    Condition: WatchdogEnabled\n"
    resources = generated_with(extra)
    for metric in ("Errors", "Throttles"):
        alarm = resources[f"Extra{metric}Alarm"]
        assert alarm["Condition"] == "WatchdogEnabled"
        properties = alarm["Properties"]
        assert (properties["Namespace"], properties["MetricName"]) == ("AWS/Lambda", metric)
        assert properties["Dimensions"] == [{"Name": "FunctionName", "Value": {"Ref": "ExtraFunction"}}]
        assert properties["AlarmName"] == {"Fn::Sub": f"${{AWS::StackName}}.Extra{metric}Alarm"}


def test_a_queue_nobody_described_stops_the_writer() -> None:
    with pytest.raises(ValueError, match="QUEUE_HOLDS"):
        generated_with("  StrayQueue:\n    Type: AWS::SQS::Queue\n")


def test_the_hand_written_part_holds_no_alarm_and_no_dashboard() -> None:
    kinds = {r["Type"] for r in parse_template(hand_written(TEXT))["Resources"].values()}
    assert not kinds & {"AWS::CloudWatch::Alarm", "AWS::CloudWatch::Dashboard"}
    assert "Mappings" not in parse_template(hand_written(TEXT))


def test_a_widget_added_to_the_description_takes_the_next_place() -> None:
    widgets = [*WIDGETS, Widget("Another", ours("VerdictHealthy"))]
    found = places(widgets)
    *_, (last_x, last_y), (x, y) = found
    beside = last_x + WIDGETS[-1].width
    assert (x, y) == ((beside, last_y) if beside + 12 <= 24 else (0, last_y + WIDGETS[-1].height))
    cells = [
        (col, row)
        for w, (left, top) in zip(widgets, found, strict=True)
        for col in range(left, left + w.width)
        for row in range(top, top + w.height)
    ]
    assert len(cells) == len(set(cells))
    assert all(col < 24 for col, _ in cells)


STACK_ALARMS = alarms(parse_template(hand_written(TEXT))["Resources"])


def test_the_generated_part_reads_back_as_what_its_writers_make() -> None:
    """One block a resource, in the hand-written part's YAML: what CloudFormation reads is the
    writers' value itself."""
    resources = TEMPLATE["Resources"]
    for alarm in STACK_ALARMS:
        assert resources[alarm.logical_id] == alarm.resource()
    assert resources["Dashboard"] == dashboard_resource(STACK_ALARMS)
    for logical_id in COMMAND_DOCUMENTS:
        assert resources[logical_id] == command_document_resource(logical_id)
    # No resource on one line (the longest lines are the alarms' descriptions).
    resources_text = TEXT.partition(MARKER)[2].partition("\nMappings:\n")[0]
    assert max(len(line) for line in resources_text.splitlines()) < 300


def _body(resource: dict[str, Any], **conditions: bool) -> dict[str, Any]:
    """The dashboard's body as CloudFormation fills it in, the ARNs and names left as their names."""
    text, variables = resource["Properties"]["DashboardBody"]["Fn::Sub"]
    for name, value in variables.items():
        condition, when_true, when_false = value["Fn::If"]
        text = text.replace(f"${{{name}}}", when_true["Fn::Sub"] if conditions[condition] else when_false)
    return dict(json.loads(text))


def test_the_dashboard_body_is_json_with_only_the_deploy_time_names_to_fill_in() -> None:
    resource = dashboard_resource(STACK_ALARMS)
    body = _body(resource, WatchdogEnabled=True, EarlyWarningMetricsOn=True, Pages=True)
    assert len(body["widgets"]) == len(WIDGETS)
    text = json.dumps(body)
    names = {part.split("}", 1)[0] for part in text.split("${")[1:]}
    assert names == {
        "AWS::Region",
        "ClusterName",
        "ControllerStatusDeadLetterQueue.QueueName",
        "HyperPodEventDeadLetterQueue.QueueName",
        *(f"{alarm.logical_id}.Arn" for alarm in STACK_ALARMS),
    }


# EarlyWarningMetricsOn holds only with WatchdogEnabled (the template's condition says so).
@pytest.mark.parametrize(("watchdog", "metrics"), [(True, True), (True, False), (False, False)])
@pytest.mark.parametrize("pages", [True, False])
def test_the_alarm_widget_lists_every_alarm_the_stack_creates(
    watchdog: bool, metrics: bool, pages: bool
) -> None:
    holding = {"WatchdogEnabled": watchdog, "EarlyWarningMetricsOn": metrics, "Pages": pages}
    body = _body(dashboard_resource(STACK_ALARMS), **holding)
    [widget] = [w for w in body["widgets"] if w["type"] == "alarm"]
    listed = [arn.removeprefix("${").removesuffix(".Arn}") for arn in widget["properties"]["alarms"]]
    created = [a.logical_id for a in STACK_ALARMS if a.condition is None or holding[a.condition]]
    assert sorted(listed) == sorted(created)
    assert {a.condition for a in STACK_ALARMS} == {None, "WatchdogEnabled", "EarlyWarningMetricsOn", "Pages"}


def test_the_dashboard_is_named_for_its_cluster_and_region_within_cloudwatch_s_rules() -> None:
    name = dashboard_resource(STACK_ALARMS)["Properties"]["DashboardName"]["Fn::Sub"]
    longest_cluster, longest_region = "c" * 63, "ap-southeast-12"
    filled = name.replace("${ClusterName}", longest_cluster).replace("${AWS::Region}", longest_region)
    assert "${" not in filled
    assert "${AWS::StackName}" not in name
    assert len(filled) <= 255
    assert all(ch.isalnum() or ch in "-_" for ch in filled)
    # The template's cluster names hold nothing a dashboard's name may not.
    assert TEMPLATE["Parameters"]["ClusterName"]["AllowedPattern"] == "^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$"


def test_a_find_in_map_to_nothing_is_a_template_error() -> None:
    assert find_in_map(TEMPLATE, ["NodeScripts", "ControllerProbe", "Script"]).startswith(
        "#!/usr/bin/env bash\n"
    )
    with pytest.raises(TemplateError, match="names no value"):
        find_in_map(TEMPLATE, ["NodeScripts", "Nothing", "Script"])


@pytest.mark.parametrize("check", SETTINGS_CHECKS, ids=lambda c: c.definition)
def test_the_cause_names_every_field_and_every_bound(check: Any) -> None:
    for field in check.fields:
        assert field.name in check.cause, field.name
        if field.kind == "number":
            assert f"{field.minimum}-{field.maximum}" in check.cause, field.name


def test_a_bound_changed_in_the_table_changes_the_definition() -> None:
    path = ROOT / "statemachine" / DRILL.definition
    fields = tuple(number("max_checks", 1, 30) if f.name == "max_checks" else f for f in DRILL.fields)
    changed = json.loads(replace(DRILL, fields=fields).written(path.read_text()))
    rules = changed["States"]["Check the settings"]["Choices"][0]["And"]
    (rule,) = [r for r in rules if "And" in r and r["And"][0]["Variable"] == "$.request.max_checks"]
    assert rule["And"][2] == {"Variable": "$.request.max_checks", "NumericLessThanEquals": 30}


# Parameter -> the request field it fills (Fill in the defaults); a deployable value must pass.
PARAMETER_FIELDS = {
    VERIFICATION: {
        "SettleSeconds": "settle_seconds",
        "MaxAttempts": "max_attempts",
        "BackoffSeconds": "backoff_seconds",
        "ConvergenceMarginSeconds": "margin_seconds",
        "SnapshotPollSeconds": "snapshot_poll_seconds",
        "MaintenanceWaitMinutes": "maintenance_wait_minutes",
        "MaintenancePollSeconds": "maintenance_poll_seconds",
    },
    DRILL: {"DrillPollSeconds": "poll_seconds", "DrillMaxChecks": "max_checks"},
    RESTORE: {},
}


@pytest.mark.parametrize("check", SETTINGS_CHECKS, ids=lambda c: c.definition)
def test_every_value_a_parameter_admits_passes_the_settings_check(check: Any) -> None:
    fields = {field.name: field for field in check.fields}
    for parameter, name in PARAMETER_FIELDS[check].items():
        spec, field = TEMPLATE["Parameters"][parameter], fields[name]
        assert field.minimum <= spec["MinValue"] <= spec["MaxValue"] <= field.maximum, parameter


def test_the_maintenance_bounds_are_the_verdicts_and_the_lease_default_is_the_runs() -> None:
    from hyperpod_ha.lease import DEFAULT_LEASE_SECONDS
    from hyperpod_ha.verdict import maintenance

    fields = {field.name: field for field in VERIFICATION.fields}
    assert (fields["maintenance_wait_minutes"].minimum, fields["maintenance_wait_minutes"].maximum) == (
        0,
        maintenance.MAX_WAIT_MINUTES,
    )
    assert (fields["maintenance_poll_seconds"].minimum, fields["maintenance_poll_seconds"].maximum) == (
        maintenance.MIN_POLL_SECONDS,
        maintenance.MAX_POLL_SECONDS,
    )
    assert fields["lease_seconds"].maximum == maintenance.MAX_LEASE_SECONDS
    # An operator's run (no starter gave lease_seconds) holds the lease as a started one would.
    definition = json.loads((ROOT / "statemachine" / VERIFICATION.definition).read_text())
    defaults = definition["States"]["Fill in the defaults"]["Parameters"]["request.$"]
    assert f'"lease_seconds":{DEFAULT_LEASE_SECONDS},' in defaults


def test_the_restore_modes_the_template_admits_are_the_ones_both_checks_take() -> None:
    from hyperpod_ha.restore.settings import RestoreMode

    admitted = set(TEMPLATE["Parameters"]["RestoreRedundancy"]["AllowedValues"])
    assert admitted == {mode.value for mode in RestoreMode}
    for check, name in ((VERIFICATION, "restore_redundancy"), (RESTORE, "mode")):
        [field] = [f for f in check.fields if f.name == name]
        assert set(field.values) == admitted, check.definition


def test_the_service_dimension_is_the_runtimes_in_the_template_the_alarms_and_the_dashboard() -> None:
    from hyperpod_ha.observability import SERVICE

    # What every function names itself (no function sets its own; tests/functions checks each).
    assert TEMPLATE["Globals"]["Function"]["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"] == SERVICE
    resources = TEMPLATE["Resources"]
    ours = [r["Properties"] for r in resources.values() if r["Type"] == "AWS::CloudWatch::Alarm"]
    ours = [alarm for alarm in ours if alarm["Namespace"] == "HyperPodHA"]
    assert ours
    for alarm in ours:
        assert {"Name": "service", "Value": SERVICE} in alarm["Dimensions"], alarm["AlarmName"]
    body = _body(resources["Dashboard"], WatchdogEnabled=True, EarlyWarningMetricsOn=True, Pages=True)
    lines = [line for w in body["widgets"] for line in w["properties"].get("metrics", [])]
    mine = [line for line in lines if line[0] == "HyperPodHA"]
    assert mine
    for line in mine:
        assert dict(zip(line[2:-1:2], line[3:-1:2], strict=True))["service"] == SERVICE, line
