"""Every CloudWatch alarm of the stack, written once: one alarm shape and a table of what differs.

The functions and dead-letter queues are read from template.yaml's hand-written part, so a new
function gets its Errors and Throttles alarms (and a new queue its depth alarm) from ``make
generate``; a test fails until it is run. Every alarm fires on any datum above 0 in five
minutes, but the levels (NoStandbyReady, AccountingQueueFilling). NoticeFunction tells people of
each change (an EventBridge rule matches the stack's alarms, so the message has the one form and
its attributes); only the notice path's own alarms (:data:`NOTICE_PATH`) publish to the topic
themselves, and tell it again when OK.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from hyperpod_ha.observability import SERVICE

TOPIC = {"Ref": "NotificationTopic"}
# The alarms of the path that tells about every other alarm: they cannot go through it. Keep in
# step with hyperpod_ha.notices.function.OWN_ALARMS and template.yaml's NoticePathAlarms.
NOTICE_PATH = frozenset({"NoticeErrorsAlarm", "NoticeThrottlesAlarm", "NoticeDeadLetterQueueAlarm"})

# What a throttled function loses, when more than "was throttled" needs saying.
THROTTLED: dict[str, str] = {"WatchdogFunction": ", so some ticks were not checked"}

# Dead-letter queue -> what its messages are (a queue without a line here stops the writer).
QUEUE_HOLDS: dict[str, str] = {
    "ControllerStatusDeadLetterQueue": "notifications rejected or never handled",
    "HyperPodEventDeadLetterQueue": "HyperPod events rejected or never handled",
    "AbandonedRunDeadLetterQueue": "Step Functions status changes never handled, a lease may stay held",
    "RotationDeadLetterQueue": "rotation invocations never handled",
    "WatchdogDeadLetterQueue": "failed ticks, so a silent failure may go unseen",
    "NoticeDeadLetterQueue": "notices never told: failed rotations or alarm changes nobody was told of",
    "PagingDeadLetterQueue": "pages the paging service never took: triggers or resolves not sent",
}
# Queues a pipe drains (not dead-letter queues): a message is there for a moment each time, so
# the alarm is on the oldest one's age. Queue -> what waits in it.
QUEUE_WAITS: dict[str, str] = {
    "PagingTriggerQueue": "triggers the paging service has not taken",
    "PagingResolveQueue": "resolves the paging service has not taken",
}
# Seconds a drained queue's oldest message may wait: the pipe retries a refused request for a
# while before the message returns to the queue.
QUEUE_WAIT_LIMIT = 300


@dataclass(frozen=True)
class Alarm:
    logical_id: str
    description: str
    namespace: str
    metric: str
    dimension: tuple[str, Any]
    statistic: str = "Sum"
    condition: str | None = None
    # An alarm on a level rather than a count (NoStandbyReady): its own comparison, the
    # periods it must hold, and the metric's other dimensions.
    comparison: str = "GreaterThanThreshold"
    evaluation_periods: int = 1
    more_dimensions: tuple[tuple[str, Any], ...] = ()
    # Seconds, or what CloudFormation resolves to them (NoStandbyReady's follows the watchdog's rate).
    period: Any = 300
    threshold: float = 0

    def resource(self) -> dict[str, Any]:
        dimensions = [self.dimension, *self.more_dimensions]
        properties = {
            "AlarmName": {"Fn::Sub": "${AWS::StackName}." + self.logical_id},
            "AlarmDescription": self.description,
            "Namespace": self.namespace,
            "MetricName": self.metric,
            "Dimensions": [{"Name": name, "Value": value} for name, value in dimensions],
            "Statistic": self.statistic,
            "Period": self.period,
            "EvaluationPeriods": self.evaluation_periods,
            "Threshold": self.threshold,
            "ComparisonOperator": self.comparison,
            "TreatMissingData": "notBreaching",
        }
        if self.evaluation_periods > 1:
            properties["DatapointsToAlarm"] = self.evaluation_periods
        if self.logical_id in NOTICE_PATH:
            properties.update({"AlarmActions": [TOPIC], "OKActions": [TOPIC]})
        condition = {"Condition": self.condition} if self.condition else {}
        return {"Type": "AWS::CloudWatch::Alarm", **condition, "Properties": properties}


# The workflows' alarms: for every state machine, one per way an execution ends other than
# SUCCEEDED (a failed rotation is told by NoticeFunction). ABORTED (stopped by hand) and TIMED_OUT
# leave no incident of their own: AbandonedRunFunction frees the cluster, the alarm tells people.
@dataclass(frozen=True)
class Workflow:
    stem: str  # the alarms' name: <stem>Executions<Ending>Alarm
    state_machine: str  # its logical id
    what: str  # its executions, as people name them
    failed: str  # what a FAILED execution of it means


WORKFLOWS = (
    Workflow(
        "Verification",
        "FailoverVerificationStateMachine",
        "Verification runs",
        "a verdict other than verified also ends FAILED, with its incident",
    ),
    Workflow(
        "Drill",
        "FailoverDrillStateMachine",
        "Drills",
        "a rejected request or settings, or a report that could not be written",
    ),
    Workflow(
        "Restore",
        "RedundancyRestoreStateMachine",
        "Restores of redundancy",
        "a rejected request, or a step that could not complete",
    ),
)
# Step Functions' metric for each ending other than SUCCEEDED -> how the description says it.
EXECUTION_ENDINGS = {
    "ExecutionsFailed": "failed",
    "ExecutionsTimedOut": "timed out",
    "ExecutionsAborted": "were stopped (aborted)",
}


def workflow_alarms() -> tuple[Alarm, ...]:
    """Every state machine's executions alarms, one per ending other than SUCCEEDED."""
    made = []
    for workflow in WORKFLOWS:
        for metric, ended in EXECUTION_ENDINGS.items():
            why = f" ({workflow.failed})" if metric == "ExecutionsFailed" else ""
            if metric == "ExecutionsAborted":
                why = " (by hand: the cluster's lease is released, nothing was verified)"
            made.append(
                Alarm(
                    f"{workflow.stem}{metric}Alarm",
                    f"{workflow.what} {ended}{why}.",
                    "AWS/States",
                    metric,
                    ("StateMachineArn", {"Ref": workflow.state_machine}),
                )
            )
    return tuple(made)


WORKFLOW_ALARMS = workflow_alarms()


# ReadyStandbys (WatchdogFunction at each tick, IncidentFunction at each run's end) at 0 in two
# periods in a row: no standby is ready. A period is 5 minutes, or the watchdog's rate when that is
# longer (the mapping below), so each period holds a tick's datum whatever the rate: two periods, as
# RedundancyGraceMinutes' default, so a planned restart does not set it off (the redundancy-lost
# incident is what pages, after the stack's own grace). A period a late tick left empty is skipped:
# CloudWatch evaluates the latest periods that hold data in its evaluation range and treats a period
# as missing (here not breaching) only when fewer than two hold data. Without the watchdog (rate 0)
# there is no alarm: a run's end alone gives too few data for it ever to fire.
READY_STANDBYS_PERIODS = "NoStandbyReadyPeriods"
MIN_PERIOD_MINUTES = 5
MAX_WATCHDOG_RATE_MINUTES = 60  # template.yaml's WatchdogRateMinutes MaxValue (a test checks)


def ready_standbys_periods() -> dict[str, dict[str, int]]:
    """``WatchdogRateMinutes`` (as ``Ref`` gives it, 0 included) -> ``{"Seconds": <period>}``."""
    return {
        str(rate): {"Seconds": 60 * max(rate, MIN_PERIOD_MINUTES)}
        for rate in range(MAX_WATCHDOG_RATE_MINUTES + 1)
    }


REDUNDANCY_ALARMS = (
    Alarm(
        "NoStandbyReadyAlarm",
        "No standby Slurm controller is ready (ReadyStandbys 0 in two periods in a row, each 5 minutes "
        "or the watchdog's rate when longer): one more failure stops the cluster. The redundancy-lost "
        "incident names the controllers and how to restore them.",
        "HyperPodHA",
        "ReadyStandbys",
        ("cluster", {"Ref": "ClusterName"}),
        statistic="Minimum",
        condition="WatchdogEnabled",
        comparison="LessThanOrEqualToThreshold",
        evaluation_periods=2,
        more_dimensions=(("service", SERVICE),),
        period={"Fn::FindInMap": [READY_STANDBYS_PERIODS, {"Ref": "WatchdogRateMinutes"}, "Seconds"]},
    ),
)


# DbdAgentQueuePercent (WatchdogFunction at each tick: the active slurmctld's DBD agent queue as a
# share of its MaxDBDMsgs) at half or more: where slurmctld itself logs "agent queue filling ...
# RESTART SLURMDBD NOW"; records are dropped at 100. Beside the accounting-at-risk incident (which
# needs the queue to grow between two ticks): it needs one datum, whatever the rate.
ACCOUNTING_QUEUE_HALF = 50
EARLY_WARNING_ALARMS = (
    Alarm(
        "AccountingQueueFillingAlarm",
        "slurmctld's queue of accounting records for slurmdbd is half full or more (DbdAgentQueuePercent "
        ">= 50): slurmdbd or its database is away, records are dropped at MaxDBDMsgs. Do not fail over "
        "now (a takeover loses the queue); bring slurmdbd back.",
        "HyperPodHA",
        "DbdAgentQueuePercent",
        ("cluster", {"Ref": "ClusterName"}),
        statistic="Maximum",
        # No metric without the watchdog, nor with EarlyWarningMetrics=off: no alarm either.
        condition="EarlyWarningMetricsOn",
        comparison="GreaterThanOrEqualToThreshold",
        more_dimensions=(("service", SERVICE),),
        period={"Fn::FindInMap": [READY_STANDBYS_PERIODS, {"Ref": "WatchdogRateMinutes"}, "Seconds"]},
        threshold=ACCOUNTING_QUEUE_HALF,
    ),
)


def _of_type(resources: Mapping[str, Any], kind: str) -> Iterator[tuple[str, str | None]]:
    for logical_id, resource in resources.items():
        if resource["Type"] == kind:
            yield logical_id, resource.get("Condition")


def function_alarms(function: str, condition: str | None) -> tuple[Alarm, Alarm]:
    """``<X>Function`` -> ``<X>ErrorsAlarm`` and ``<X>ThrottlesAlarm``."""
    stem, dimension = function.removesuffix("Function"), ("FunctionName", {"Ref": function})
    return (
        Alarm(
            f"{stem}ErrorsAlarm",
            f"{function} raised errors (see its log group).",
            "AWS/Lambda",
            "Errors",
            dimension,
            condition=condition,
        ),
        Alarm(
            f"{stem}ThrottlesAlarm",
            f"{function} was throttled{THROTTLED.get(function, '')}.",
            "AWS/Lambda",
            "Throttles",
            dimension,
            condition=condition,
        ),
    )


def queue_alarm(queue: str, condition: str | None) -> Alarm:
    if queue in QUEUE_WAITS:
        return Alarm(
            f"{queue}Alarm",
            f"A message waited in {queue} over {QUEUE_WAIT_LIMIT} s ({QUEUE_WAITS[queue]}).",
            "AWS/SQS",
            "ApproximateAgeOfOldestMessage",
            ("QueueName", {"Fn::GetAtt": [queue, "QueueName"]}),
            statistic="Maximum",
            condition=condition,
            threshold=QUEUE_WAIT_LIMIT,
        )
    if queue not in QUEUE_HOLDS:
        raise ValueError(f"say what {queue} holds in hyperpod_ha_stack.alarms.QUEUE_HOLDS")
    return Alarm(
        f"{queue}Alarm",
        f"Messages in {queue} ({QUEUE_HOLDS[queue]}).",
        "AWS/SQS",
        "ApproximateNumberOfMessagesVisible",
        ("QueueName", {"Fn::GetAtt": [queue, "QueueName"]}),
        statistic="Maximum",
        condition=condition,
    )


def alarms(resources: Mapping[str, Any]) -> list[Alarm]:
    """The stack's alarms for the hand-written ``resources``: each function's, each queue's,
    then the workflows'."""
    found = [a for f, c in _of_type(resources, "AWS::Serverless::Function") for a in function_alarms(f, c)]
    found += [queue_alarm(queue, c) for queue, c in _of_type(resources, "AWS::SQS::Queue")]
    return found + list(WORKFLOW_ALARMS) + list(REDUNDANCY_ALARMS) + list(EARLY_WARNING_ALARMS)


# The alarms NoticeFunction tells: the stack's, but the notice path's own, as the template creates
# them in each case its env's TOLD_ALARMS picks: the conditions that hold then (EarlyWarningMetricsOn
# holds only with WatchdogEnabled; Pages with either).
TOLD_ALARMS = "ToldAlarms"
TOLD_BY_CONDITION: dict[str, frozenset[str]] = {
    "WithWatchdog": frozenset({"WatchdogEnabled", "EarlyWarningMetricsOn"}),
    "WithWatchdogWithoutEarlyWarningMetrics": frozenset({"WatchdogEnabled"}),
    "WithoutWatchdog": frozenset(),
    "WithWatchdogAndPaging": frozenset({"WatchdogEnabled", "EarlyWarningMetricsOn", "Pages"}),
    "WithWatchdogWithoutEarlyWarningMetricsAndPaging": frozenset({"WatchdogEnabled", "Pages"}),
    "WithPaging": frozenset({"Pages"}),
}


def told_alarms(stack_alarms: list[Alarm]) -> dict[str, dict[str, str]]:
    """``ToldAlarms``: for each case, the comma-separated logical ids of the alarms created then,
    but the notice path's own; an alarm of another condition stops the writer."""
    known = frozenset().union(*TOLD_BY_CONDITION.values())
    conditions = {alarm.condition for alarm in stack_alarms} - {None} - known
    if conditions:
        raise ValueError(f"say in hyperpod_ha_stack.alarms.told_alarms which alarms {conditions} create")
    told = [alarm for alarm in stack_alarms if alarm.logical_id not in NOTICE_PATH]
    return {
        key: {
            "LogicalIds": ",".join(
                a.logical_id for a in told if a.condition is None or a.condition in holding
            )
        }
        for key, holding in TOLD_BY_CONDITION.items()
    }
