"""Every metric of ours the dashboard shows is one the functions really emit, with the same
namespace and dimensions: the handlers run on the embedded stack, their Powertools metrics
(CloudWatch embedded metric format on stdout) are collected, and each widget is checked."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest

from hyperpod_ha import state_table
from tests.conftest import EVENTS, Embedded, UseTransport
from tests.fakes.unreachable_runner import UnreachableRunner
from tests.functions.test_controller_status import sns_event, with_message
from tests.functions.test_failover_drill import EXECUTION, begin, finish_event

VERDICTS = ("HEALTHY", "FAILED_OVER", "DEGRADED", "SPLIT_BRAIN", "DOWN", "UNKNOWN")
# The early warnings' per-cluster figures, written at each watchdog tick on a cluster it reaches:
# checked there with the same dimensions.
WATCHDOG_FIGURES = frozenset({"ActiveServerThreads", "DbdAgentQueuePercent"})


def emitted(text: str) -> set[tuple[str, str, tuple[tuple[str, str], ...]]]:
    """(namespace, metric, dimensions) of every EMF line printed."""
    found = set()
    for line in text.splitlines():
        if not line.startswith('{"_aws"'):
            continue
        blob = json.loads(line)
        for directive in blob["_aws"]["CloudWatchMetrics"]:
            for dimension_set in directive["Dimensions"]:
                dimensions = tuple(sorted((name, str(blob[name])) for name in dimension_set))
                for metric in directive["Metrics"]:
                    found.add((directive["Namespace"], metric["Name"], dimensions))
    return found


def release_lease(embedded: Embedded) -> None:
    boto3.client("dynamodb").delete_item(
        TableName=embedded.stack.ref("StateTable"), Key=state_table.key(state_table.lease_key("ml-cluster"))
    )


def run_every_emitting_path(embedded: Embedded, use_transport: UseTransport) -> None:
    stack = embedded.stack
    # A verification run's last check (its counters say so): the final verdict, the current one.
    last = {"reports": [], "attempt": 1, "max_attempts": 1, "started_at": "2026-12-04T09:00:00+00:00"}
    stack.invoke("EvaluateVerdictFunction", {**last, "trigger": {"time": "2026-12-04T09:00:00+00:00"}})
    node_event = json.loads((EVENTS / "eventbridge_node_health_controller.json").read_text())
    stack.invoke("HyperPodEventFunction", node_event)  # started
    stack.invoke("HyperPodEventFunction", {**node_event, "id": "another-event"})  # joined
    release_lease(embedded)
    first = sns_event()
    stack.invoke("ControllerStatusFunction", first)  # started
    stack.invoke(
        "ControllerStatusFunction", with_message(first, "m-2", first["Records"][0]["Sns"]["Message"])
    )
    release_lease(embedded)
    for verdict in VERDICTS:
        event = {
            "action": "open",
            "cluster": "ml-cluster",
            "verdict": verdict,
            "execution_id": f"e-{verdict}",
        }
        stack.invoke("IncidentFunction", {**event, "reasons": ["r"]})
    stack.invoke(
        "IncidentFunction",
        {
            "action": "resolve",
            "cluster": "ml-cluster",
            "verdict": "HEALTHY",
            "reasons": [],
            "execution_id": "e-ok",
            # the run's redundancy: ReadyStandbys per cluster
            "redundancy": "full",
            "standbys": ["ctl2"],
            "not_ready": {},
            "missed_notifications": 0,  # ControllerNotificationsFailed per cluster
        },
    )
    stack.invoke("FailoverDrillFunction", finish_event(begin(embedded)))  # completed, with the figures
    stack.invoke("FailoverDrillFunction", finish_event(begin(embedded), error={"Error": "X", "Cause": "y"}))
    begin(embedded, EXECUTION + "-holder")  # another drill holds the cluster: this one is refused
    stack.invoke("FailoverDrillFunction", finish_event(begin(embedded), takeover=None, hand_back=None))
    release_lease(embedded)
    use_transport("unreachable", lambda: UnreachableRunner("unreachable"))
    stack.override_environment("RotateDbSecretFunction", COMMAND_TRANSPORT="unreachable")
    # The discovered controllers (a request only chooses among them), all unreachable here.
    stack.invoke("RotateDbSecretFunction", {"action": "rollout"})


def dashboard_widgets(embedded: Embedded) -> list[dict[str, Any]]:
    name = str(embedded.stack.outputs["DashboardName"])
    body = json.loads(boto3.client("cloudwatch").get_dashboard(DashboardName=name)["DashboardBody"])
    return list(body["widgets"])


def dashboard_metrics(embedded: Embedded) -> list[list[Any]]:
    widgets = dashboard_widgets(embedded)
    return [
        metric
        for widget in widgets
        if widget["type"] == "metric"
        for metric in widget["properties"]["metrics"]
    ]


def test_every_dashboard_metric_is_emitted_with_its_namespace_and_dimensions(
    embedded_held: Embedded, capsys: pytest.CaptureFixture[str], use_transport: UseTransport
) -> None:
    run_every_emitting_path(embedded_held, use_transport)
    found = emitted(capsys.readouterr().out)
    ours = [m for m in dashboard_metrics(embedded_held) if m[0] == "HyperPodHA"]
    assert len(ours) >= 20
    # Each line is the stack's own cluster's: two stacks in a region never share one.
    assert {tuple(m[2:6]) for m in ours} == {("service", "hyperpod-ha", "cluster", "ml-cluster")}
    missing = []
    for namespace, name, *rest in ours:
        if name in WATCHDOG_FIGURES:
            continue  # a watchdog tick's: tests/functions/test_watchdog_early_warning.py
        dimensions = tuple(sorted(zip(rest[0:-1:2], rest[1:-1:2], strict=True)))
        if (namespace, name, dimensions) not in found:
            missing.append(name)
    assert missing == [], (
        f"on the dashboard but never emitted: {missing}; emitted: {sorted(f[1] for f in found)}"
    )


def test_the_queue_widgets_name_the_stack_s_dead_letter_queues(embedded_held: Embedded) -> None:
    queues = {m[3] for m in dashboard_metrics(embedded_held) if m[0] == "AWS/SQS"}
    urls = boto3.client("sqs").list_queues()["QueueUrls"]
    ours = ("ControllerStatusDeadLetterQueue", "HyperPodEventDeadLetterQueue")
    assert queues == {url.rsplit("/", 1)[-1] for url in urls if url.endswith(ours)}


def test_the_alarm_widget_shows_every_alarm_of_the_stack(embedded_held: Embedded) -> None:
    [widget] = [w for w in dashboard_widgets(embedded_held) if w["type"] == "alarm"]
    stack = embedded_held.stack.name
    alarms = boto3.client("cloudwatch").describe_alarms(AlarmNamePrefix=f"{stack}.")["MetricAlarms"]
    assert len(alarms) > 30
    assert sorted(widget["properties"]["alarms"]) == sorted(alarm["AlarmArn"] for alarm in alarms)


def test_the_dashboard_is_named_for_the_cluster_not_the_stack(embedded_held: Embedded) -> None:
    name = str(embedded_held.stack.outputs["DashboardName"])
    assert name == f"HyperPodHA-ml-cluster-{boto3.client('cloudwatch').meta.region_name}"
