"""The stack's CloudWatch dashboard, described here and generated into template.yaml.

A widget is a title and its metrics; the layout (two widgets a row, 12 x 6 each) follows from
the order. Adding a widget is adding a line to ``WIDGETS`` and running ``make probe-document``
(a test fails until then; ``tests/functions/test_dashboard.py`` checks that every metric of ours
is one the functions emit). The body is a ``Fn::Sub`` string: ``${AWS::Region}`` and
``${<Queue>.QueueName}`` are filled in at deploy time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

NAMESPACE = "HyperPodHA"
# Powertools' default dimension (POWERTOOLS_SERVICE_NAME in the template's Globals).
SERVICE = ("service", "hyperpod-ha")
COLUMNS, WIDTH, HEIGHT = 2, 12, 6


@dataclass(frozen=True)
class Metric:
    namespace: str
    name: str
    dimension: tuple[str, str]
    label: str
    per_cluster: bool = False  # also the dimension ``cluster`` (the stack's ClusterName)

    def line(self, stat: str) -> list[Any]:
        cluster = ("cluster", "${ClusterName}") if self.per_cluster else ()
        return [self.namespace, self.name, *self.dimension, *cluster, {"stat": stat, "label": self.label}]


def ours(*names: str) -> tuple[Metric, ...]:
    """Metrics the functions emit (Powertools, namespace HyperPodHA), labelled by their name."""
    return tuple(Metric(NAMESPACE, name, SERVICE, name) for name in names)


def queue_depth(queue: str, label: str) -> Metric:
    depth = "ApproximateNumberOfMessagesVisible"
    return Metric("AWS/SQS", depth, ("QueueName", f"${{{queue}.QueueName}}"), label)


@dataclass(frozen=True)
class Widget:
    title: str
    metrics: tuple[Metric, ...]
    stat: str = "Sum"
    stacked: bool = False

    def body(self, position: int) -> dict[str, Any]:
        return {
            "type": "metric",
            "x": position % COLUMNS * WIDTH,
            "y": position // COLUMNS * HEIGHT,
            "width": WIDTH,
            "height": HEIGHT,
            "properties": {
                "title": self.title,
                "region": "${AWS::Region}",
                "view": "timeSeries",
                "stacked": self.stacked,
                "period": 300,
                "stat": self.stat,
                "metrics": [metric.line(self.stat) for metric in self.metrics],
            },
        }


VERDICTS = ours(
    "VerdictHealthy",
    "VerdictFailedOver",
    "VerdictDegraded",
    "VerdictSplitBrain",
    "VerdictDown",
    "VerdictUnknown",
)
WIDGETS = (
    Widget("Verdicts over time", VERDICTS, stacked=True),
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
        (Metric(NAMESPACE, "ReadyStandbys", SERVICE, "ReadyStandbys", per_cluster=True),),
        stat="Minimum",
    ),
)


def dashboard_resource() -> dict[str, Any]:
    body = {"widgets": [widget.body(position) for position, widget in enumerate(WIDGETS)]}
    return {
        "Type": "AWS::CloudWatch::Dashboard",
        "Properties": {
            "DashboardName": {"Fn::Sub": "${AWS::StackName}-hyperpod-ha"},
            "DashboardBody": {"Fn::Sub": json.dumps(body, indent=2) + "\n"},
        },
    }
