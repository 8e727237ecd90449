"""The stack's CloudWatch dashboard, described here and generated into template.yaml.

A widget is a title and its metrics (or, for the alarm widget, the stack's alarms); the layout
follows from the order, left to right in rows 24 units wide. Adding a widget is adding a line to
``WIDGETS`` and running ``make generate`` (a test fails until then;
``tests/functions/test_dashboard.py`` checks that every metric of ours is one the functions
emit, with the same dimensions). The body is a ``Fn::Sub``: ``${AWS::Region}``,
``${ClusterName}``, ``${<Queue>.QueueName}`` and ``${<Alarm>.Arn}`` are filled in at deploy
time, and the alarms that exist only under a condition come in through a ``Fn::If`` variable.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from hyperpod_ha.observability import SERVICE
from hyperpod_ha.verdict import VERDICT_CODES

NAMESPACE = "HyperPodHA"
# The dimensions every function sets (hyperpod_ha.observability.metric_dimensions): the
# template's POWERTOOLS_SERVICE_NAME and the stack's cluster, so two stacks never share a line.
DIMENSIONS = (("service", SERVICE), ("cluster", "${ClusterName}"))
ROW, WIDTH, HEIGHT = 24, 12, 6
# Dashboards are global to the account: the region keeps two stacks of same-named clusters in
# two regions apart. Only letters, digits, - and _ (a cluster name is letters, digits and -).
DASHBOARD_NAME = "HyperPodHA-${ClusterName}-${AWS::Region}"


@dataclass(frozen=True)
class Metric:
    namespace: str
    name: str
    dimensions: tuple[tuple[str, str], ...]
    label: str

    def line(self, stat: str) -> list[Any]:
        pairs = [part for pair in self.dimensions for part in pair]
        return [self.namespace, self.name, *pairs, {"stat": stat, "label": self.label}]


@dataclass(frozen=True)
class PerController:
    """One line per controller and role of a metric the watchdog writes with the dimensions
    ``controller`` and ``role`` (hyperpod_ha.early_warning.metrics): a CloudWatch SEARCH, whose
    lines are labelled with those values, so the active controller is marked on each line."""

    name: str

    def line(self, stat: str) -> list[Any]:
        keys = "{" + NAMESPACE + ",cluster,controller,role,service}"
        search = f"SEARCH('{keys} MetricName=\"{self.name}\" cluster=\"${{ClusterName}}\"', '{stat}', 300)"
        # No label: each line's is its dimensions' values (ctl1 active, ctl2 standby, ...).
        return [{"expression": search, "id": f"e{self.name.lower()}"}]


def ours(*names: str) -> tuple[Metric, ...]:
    """Metrics the functions emit (Powertools, namespace HyperPodHA), labelled by their name."""
    return tuple(Metric(NAMESPACE, name, DIMENSIONS, name) for name in names)


def queue_depth(queue: str, label: str) -> Metric:
    depth = "ApproximateNumberOfMessagesVisible"
    return Metric("AWS/SQS", depth, (("QueueName", f"${{{queue}.QueueName}}"),), label)


class AlarmLike(Protocol):
    """What the alarm widget needs of :class:`hyperpod_ha_stack.alarms.Alarm`."""

    @property
    def logical_id(self) -> str: ...

    @property
    def condition(self) -> str | None: ...


@dataclass(frozen=True)
class Widget:
    title: str
    metrics: tuple[Metric | PerController, ...]
    stat: str = "Sum"
    stacked: bool = False
    width: int = WIDTH
    height: int = HEIGHT
    # Extra properties (the current verdict's y axis and its lines, one per verdict).
    extra: tuple[tuple[str, Any], ...] = ()

    def properties(self, alarms: Sequence[AlarmLike]) -> dict[str, Any]:
        return {
            "title": self.title,
            "region": "${AWS::Region}",
            "view": "timeSeries",
            "stacked": self.stacked,
            "period": 300,
            "stat": self.stat,
            "metrics": [metric.line(self.stat) for metric in self.metrics],
            **dict(self.extra),
        }

    def body(self, x: int, y: int, alarms: Sequence[AlarmLike] = ()) -> dict[str, Any]:
        kind = "alarm" if isinstance(self, AlarmWidget) else "metric"
        return {
            "type": kind,
            "x": x,
            "y": y,
            "width": self.width,
            "height": self.height,
            "properties": self.properties(alarms),
        }


@dataclass(frozen=True)
class AlarmWidget(Widget):
    """Every alarm of the stack, its state at a glance (CloudWatch's alarm status widget)."""

    def properties(self, alarms: Sequence[AlarmLike]) -> dict[str, Any]:
        arns = [f"${{{a.logical_id}.Arn}}" for a in alarms if a.condition is None]
        # A conditional alarm's ARN is a marker here, replaced by its condition's variable.
        arns += sorted({_marker(a.condition) for a in alarms if a.condition is not None})
        return {"title": self.title, "alarms": arns, "sortBy": "stateUpdatedTimestamp"}


def places(widgets: Sequence[Widget]) -> list[tuple[int, int]]:
    """(x, y) of each widget: left to right, a new row when the next does not fit."""
    found, x, y, row_height = [], 0, 0, 0
    for widget in widgets:
        if x + widget.width > ROW:
            x, y, row_height = 0, y + row_height, 0
        found.append((x, y))
        x, row_height = x + widget.width, max(row_height, widget.height)
    return found


VERDICT_NUMBERS = sorted(VERDICT_CODES.items(), key=lambda item: item[1])
CURRENT_VERDICT = Widget(
    "Current verdict (each run's final one; higher is worse, 2 and up not verified)",
    (
        Metric(
            NAMESPACE,
            "VerdictCode",
            DIMENSIONS,
            "verdict: " + ", ".join(f"{code} {name.value}" for name, code in VERDICT_NUMBERS),
        ),
    ),
    stat="Maximum",
    extra=(
        ("yAxis", {"left": {"min": 0, "max": max(VERDICT_CODES.values()), "showUnits": False}}),
        (
            "annotations",
            {"horizontal": [{"label": name.value, "value": code} for name, code in VERDICT_NUMBERS]},
        ),
    ),
)
VERDICTS = ours(
    "VerdictHealthy",
    "VerdictFailedOver",
    "VerdictDegraded",
    "VerdictSplitBrain",
    "VerdictDown",
    "VerdictUnknown",
)
WIDGETS: tuple[Widget, ...] = (
    CURRENT_VERDICT,
    Widget("Verdicts over time", VERDICTS, stacked=True),
    AlarmWidget("Alarm states (every alarm of the stack)", (), width=ROW),
    Widget(
        "Verification runs started and joined",
        ours("NotificationsStarted", "NotificationsJoined", "NodeEventsStarted", "NodeEventsJoined"),
    ),
    Widget("Failover drills", ours("DrillsCompleted", "DrillsRefused", "DrillsFailed"), stacked=True),
    Widget(
        "Drill recovery times (seconds)",
        ours("DrillTakeoverSeconds", "DrillVerifiedSeconds", "DrillHandBackSeconds"),
        stat="Maximum",
    ),
    Widget("Incidents opened and resolved", ours("IncidentsOpened", "IncidentsResolved")),
    Widget(
        "Dead-letter queue depth",
        (
            queue_depth("ControllerStatusDeadLetterQueue", "controller status DLQ"),
            queue_depth("NodeEventDeadLetterQueue", "node event DLQ"),
        ),
        stat="Maximum",
    ),
    Widget(
        "Secret rotation roll-out per controller",
        ours("RolloutControllersUpdated", "RolloutControllersFailed"),
    ),
    # 0: no standby is ready, one more failure stops the cluster (NoStandbyReadyAlarm).
    Widget(
        "Ready standbys",
        ours("ReadyStandbys"),
        stat="Minimum",
    ),
    # The early warnings' figures (watchdog ticks): the serving controller's, whoever it is, then
    # per controller with its role in each line's label.
    Widget(
        "Active controller: server threads, DBD agent queue (% of MaxDBDMsgs; 50 sets off "
        "AccountingQueueFillingAlarm)",
        ours("ActiveServerThreads", "DbdAgentQueuePercent"),
        stat="Maximum",
    ),
    Widget(
        "RPCs: average time over the last tick's window, sdiag's round trip (ms; per controller, role)",
        (PerController("RpcAverageMs"), PerController("RoundTripMs")),
        stat="Maximum",
    ),
    Widget(
        "Queues: agent, DBD agent (per controller, role)",
        (PerController("AgentQueue"), PerController("DbdAgentQueue")),
        stat="Maximum",
    ),
    Widget(
        "Heartbeat lag (s) and StateSaveLocation write (ms) (per controller, role)",
        (PerController("HeartbeatLagSeconds"), PerController("StateSaveWriteMs")),
        stat="Maximum",
    ),
)


def _marker(condition: str) -> str:
    return f"@@alarms-if-{condition}@@"


def _variable(condition: str) -> str:
    return f"AlarmsIf{condition}"


def _arns_after_comma(alarms: Sequence[AlarmLike], condition: str) -> str:
    return "".join(f', "${{{a.logical_id}.Arn}}"' for a in alarms if a.condition == condition)


def dashboard_resource(alarms: Sequence[AlarmLike]) -> dict[str, Any]:
    """The dashboard for the stack's ``alarms`` (hyperpod_ha_stack.alarms.alarms)."""
    if not any(a.condition is None for a in alarms):
        raise ValueError("the alarm widget needs an alarm that always exists before the conditional ones")
    widgets = [w.body(x, y, alarms) for w, (x, y) in zip(WIDGETS, places(WIDGETS), strict=True)]
    text = json.dumps({"widgets": widgets}, indent=2) + "\n"
    conditions = sorted({a.condition for a in alarms if a.condition is not None})
    for condition in conditions:
        # `, "<marker>"` -> `${AlarmsIf<Condition>}`: the condition's ARNs, each after a comma, or nothing.
        text = re.sub(rf',\s*"{re.escape(_marker(condition))}"', f"${{{_variable(condition)}}}", text)
    variables = {
        _variable(condition): {"Fn::If": [condition, {"Fn::Sub": _arns_after_comma(alarms, condition)}, ""]}
        for condition in conditions
    }
    return {
        "Type": "AWS::CloudWatch::Dashboard",
        "Properties": {
            "DashboardName": {"Fn::Sub": DASHBOARD_NAME},
            "DashboardBody": {"Fn::Sub": [text, variables] if variables else text},
        },
    }
