"""Alarms, logs, dead-letter queues and concurrency in template.yaml (issue 16, item 10)."""

from __future__ import annotations

from typing import Any

import pytest

from hyperpod_ha.notices.function import OWN_ALARMS
from hyperpod_ha_stack.alarms import NOTICE_PATH, QUEUE_HOLDS, QUEUE_WAIT_LIMIT, QUEUE_WAITS
from hyperpod_ha_stack.template import find_in_map, load_template
from tests.conftest import ROOT

TEMPLATE = load_template(ROOT / "template.yaml")
RESOURCES: dict[str, Any] = TEMPLATE["Resources"]
FUNCTIONS = {k: v for k, v in RESOURCES.items() if v["Type"] == "AWS::Serverless::Function"}
ALARMS = [v["Properties"] for v in RESOURCES.values() if v["Type"] == "AWS::CloudWatch::Alarm"]
# CloudWatch Logs' retention values (PutRetentionPolicy).
RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557,
                  2922, 3288, 3653]  # fmt: skip
TOPIC = {"Ref": "NotificationTopic"}


def alarms_on(namespace: str, metric: str, dimension: str, value: Any) -> list[dict[str, Any]]:
    return [
        alarm
        for alarm in ALARMS
        if (alarm["Namespace"], alarm["MetricName"]) == (namespace, metric)
        and {"Name": dimension, "Value": value} in alarm["Dimensions"]
    ]


def test_only_the_notice_paths_alarms_publish_to_the_topic_themselves() -> None:
    # Every other alarm's change is told by NoticeFunction, in the one form with its attributes.
    assert ALARMS
    publishing = {alarm["AlarmName"]["Fn::Sub"] for alarm in ALARMS if "AlarmActions" in alarm}
    assert publishing == {f"${{AWS::StackName}}.{name}" for name in NOTICE_PATH}
    assert NOTICE_PATH == OWN_ALARMS
    for alarm in ALARMS:
        if alarm["MetricName"] not in ("ReadyStandbys", "DbdAgentQueuePercent"):  # levels: tested below
            assert alarm["ComparisonOperator"] == "GreaterThanThreshold"
        if alarm["MetricName"] == "ApproximateAgeOfOldestMessage":  # a queue a pipe drains
            assert alarm["Threshold"] == QUEUE_WAIT_LIMIT
        elif alarm["MetricName"] != "DbdAgentQueuePercent":
            assert alarm["Threshold"] == 0
        if "AlarmActions" in alarm:
            assert alarm["AlarmActions"] == alarm["OKActions"] == [TOPIC]
        else:
            assert "OKActions" not in alarm


@pytest.mark.parametrize("logical_id", sorted(FUNCTIONS))
@pytest.mark.parametrize("metric", ["Errors", "Throttles"])
def test_every_function_has_error_and_throttle_alarms(logical_id: str, metric: str) -> None:
    assert len(alarms_on("AWS/Lambda", metric, "FunctionName", {"Ref": logical_id})) == 1


@pytest.mark.parametrize("queue", sorted(k for k, v in RESOURCES.items() if v["Type"] == "AWS::SQS::Queue"))
def test_every_dead_letter_queue_has_an_alarm(queue: str) -> None:
    value = {"Fn::GetAtt": [queue, "QueueName"]}
    # A queue a pipe drains holds a message for a moment each time: its alarm is the oldest's age.
    metric = "ApproximateAgeOfOldestMessage" if queue in QUEUE_WAITS else "ApproximateNumberOfMessagesVisible"
    assert len(alarms_on("AWS/SQS", metric, "QueueName", value)) == 1


def test_the_paging_queues_alarm_on_age_and_their_dead_letter_queue_on_depth() -> None:
    assert set(QUEUE_WAITS) == {"PagingTriggerQueue", "PagingResolveQueue"}
    assert "PagingDeadLetterQueue" in QUEUE_HOLDS


STATE_MACHINES = sorted(k for k, v in RESOURCES.items() if v["Type"] == "AWS::Serverless::StateMachine")


def test_the_three_workflows_are_the_state_machines() -> None:
    assert STATE_MACHINES == [
        "FailoverDrillStateMachine",
        "FailoverVerificationStateMachine",
        "RedundancyRestoreStateMachine",
    ]


@pytest.mark.parametrize("machine", STATE_MACHINES)
@pytest.mark.parametrize("metric", ["ExecutionsFailed", "ExecutionsTimedOut", "ExecutionsAborted"])
def test_every_workflow_alarms_on_each_ending_but_succeeded(machine: str, metric: str) -> None:
    # ABORTED (stopped by hand) and TIMED_OUT too: neither leaves an incident of its own.
    assert len(alarms_on("AWS/States", metric, "StateMachineArn", {"Ref": machine})) == 1


def test_no_standby_ready_alarms_on_ready_standbys_at_0_for_two_periods_of_the_watchdog() -> None:
    (alarm,) = alarms_on("HyperPodHA", "ReadyStandbys", "cluster", {"Ref": "ClusterName"})
    assert alarm["AlarmName"] == {"Fn::Sub": "${AWS::StackName}.NoStandbyReadyAlarm"}
    assert {"Name": "service", "Value": "hyperpod-ha"} in alarm["Dimensions"]
    assert (alarm["Statistic"], alarm["ComparisonOperator"], alarm["Threshold"]) == (
        "Minimum",
        "LessThanOrEqualToThreshold",
        0,
    )
    assert alarm["EvaluationPeriods"] == alarm["DatapointsToAlarm"] == 2
    assert alarm["TreatMissingData"] == "notBreaching"
    # Only with the watchdog: a run's end alone gives too few data for it ever to fire.
    assert RESOURCES["NoStandbyReadyAlarm"]["Condition"] == "WatchdogEnabled"
    assert TEMPLATE["Conditions"]["WatchdogEnabled"] == {
        "Fn::Not": [{"Fn::Equals": [{"Ref": "WatchdogRateMinutes"}, 0]}]
    }


def test_every_watchdog_rate_gives_the_no_standby_alarm_a_period_that_holds_a_tick() -> None:
    period = RESOURCES["NoStandbyReadyAlarm"]["Properties"]["Period"]
    assert period == {"Fn::FindInMap": ["NoStandbyReadyPeriods", {"Ref": "WatchdogRateMinutes"}, "Seconds"]}
    rate = TEMPLATE["Parameters"]["WatchdogRateMinutes"]
    assert (rate["MinValue"], rate["MaxValue"]) == (0, 60)
    for minutes in range(1, rate["MaxValue"] + 1):
        seconds = find_in_map(TEMPLATE, ["NoStandbyReadyPeriods", minutes, "Seconds"])
        assert seconds % 60 == 0, minutes  # what CloudWatch takes above a minute
        assert seconds >= 60 * minutes, minutes  # a tick in every period: two ticks at 0 fire it
        assert seconds >= 300, minutes  # never sooner than 10 minutes (a planned restart)
        assert seconds * 2 <= 86400, minutes  # CloudWatch: periods x period within a day
    assert find_in_map(TEMPLATE, ["NoStandbyReadyPeriods", 5, "Seconds"]) == 300  # the default rate


def test_a_failed_rotation_is_told_by_the_notice_function() -> None:
    events = FUNCTIONS["NoticeFunction"]["Properties"]["Events"]
    pattern = events["RotationFailed"]["Properties"]["Pattern"]
    assert pattern["source"] == ["aws.secretsmanager"]
    assert set(pattern["detail"]["eventName"]) == {"RotationFailed", "RotationAbandoned"}
    assert pattern["detail"]["additionalEventData"]["SecretId"] == [{"Ref": "DbSecretArn"}]
    # No rule or alarm sends raw JSON to the topic any more.
    targets = [
        target
        for resource in RESOURCES.values()
        if resource["Type"] == "AWS::Events::Rule"
        for target in resource["Properties"].get("Targets", [])
    ]
    assert TOPIC not in [target["Arn"] for target in targets]


def test_the_topic_takes_the_notice_paths_alarms_under_a_key_that_lets_them() -> None:
    topic = RESOURCES["NotificationTopic"]["Properties"]
    assert topic["KmsMasterKeyId"] == {"Ref": "NotificationKey"}  # aws/sns refuses CloudWatch
    services = [
        s["Principal"]["Service"]
        for s in RESOURCES["NotificationKey"]["Properties"]["KeyPolicy"]["Statement"]
        if "Service" in s.get("Principal", {})
    ]
    assert services == ["cloudwatch.amazonaws.com"]


def test_log_retention_is_a_parameter_with_cloudwatchs_values() -> None:
    parameter = TEMPLATE["Parameters"]["LogRetentionDays"]
    assert parameter["AllowedValues"] == RETENTION_DAYS
    groups = {k: v for k, v in RESOURCES.items() if v["Type"] == "AWS::Logs::LogGroup"}
    for properties in (v["Properties"] for v in groups.values()):
        assert properties["RetentionInDays"] == {"Ref": "LogRetentionDays"}
    for logical_id, function in FUNCTIONS.items():
        group = function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
        assert group in groups, logical_id


def _asynchronous(function: dict[str, Any]) -> bool:
    events = function["Properties"].get("Events", {}).values()
    return any(event["Type"] in ("SNS", "EventBridgeRule") for event in events)


@pytest.mark.parametrize("logical_id", sorted(k for k, v in FUNCTIONS.items() if _asynchronous(v)))
def test_every_asynchronous_invocation_has_a_dead_letter_queue(logical_id: str) -> None:
    properties = FUNCTIONS[logical_id]["Properties"]
    assert properties["DeadLetterQueue"]["Type"] == "SQS"
    for event in properties["Events"].values():
        if event["Type"] == "EventBridgeRule":
            assert "Arn" in event["Properties"]["DeadLetterConfig"]


def test_the_rotation_function_has_a_dead_letter_queue() -> None:
    # Invoked by Secrets Manager, not through an event source of its own.
    assert FUNCTIONS["RotateDbSecretFunction"]["Properties"]["DeadLetterQueue"]["Type"] == "SQS"


def test_the_abandoned_run_rule_also_matches_failed_runs() -> None:
    event = FUNCTIONS["AbandonedRunFunction"]["Properties"]["Events"]["VerificationRunAbandoned"]
    assert set(event["Properties"]["Pattern"]["detail"]["status"]) == {"ABORTED", "TIMED_OUT", "FAILED"}


def test_the_abandoned_run_rule_matches_every_state_machine_that_holds_the_lease() -> None:
    # A restore holds the cluster's lease as a run or a drill does: ended, it must free it too.
    function = FUNCTIONS["AbandonedRunFunction"]["Properties"]
    pattern = function["Events"]["VerificationRunAbandoned"]["Properties"]["Pattern"]
    assert sorted(ref["Ref"] for ref in pattern["detail"]["stateMachineArn"]) == STATE_MACHINES
    variables = function["Environment"]["Variables"]
    assert variables["RESTORE_STATE_MACHINE_ARN"] == {"Ref": "RedundancyRestoreStateMachine"}


@pytest.mark.parametrize("logical_id", ["ControllerStatusFunction", "HyperPodEventFunction"])
def test_functions_reachable_from_outside_have_reserved_concurrency(logical_id: str) -> None:
    reserved = FUNCTIONS[logical_id]["Properties"]["ReservedConcurrentExecutions"]
    assert reserved == {"Ref": "IngestionReservedConcurrency"}


def test_the_accounting_queue_alarm_fires_at_half_of_max_dbd_msgs() -> None:
    """slurmctld's own "agent queue filling" point; records are dropped at 100 %."""
    (alarm,) = alarms_on("HyperPodHA", "DbdAgentQueuePercent", "cluster", {"Ref": "ClusterName"})
    assert (alarm["ComparisonOperator"], alarm["Threshold"], alarm["Statistic"]) == (
        "GreaterThanOrEqualToThreshold",
        50,
        "Maximum",
    )
    assert {"Name": "service", "Value": "hyperpod-ha"} in alarm["Dimensions"]
    assert "Do not fail over now" in alarm["AlarmDescription"]
