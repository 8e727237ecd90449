"""WatchdogFunction's early warnings on the embedded stack (issue 39): each tick's figures as
metrics per controller and role (what the dashboard's lines search for), and a warning past its
threshold opening its incident through IncidentFunction. The windows and the resolving are the
unit tests' (tests/unit/early_warning)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace

import boto3
import pytest

from hyperpod_ha.early_warning.metrics import ACTIVE_METRICS, CLUSTER_METRICS, NODE_METRICS
from hyperpod_ha.incidents.keys import KIND_KEY, SOURCE
from hyperpod_ha_dev.simulation.engine import EmbeddedRun, simulated_run
from hyperpod_ha_dev.simulation.scenarios import SCENARIOS
from hyperpod_ha_stack.dashboard import WIDGETS, PerController
from tests.conftest import ROOT
from tests.functions.test_dashboard import WATCHDOG_FIGURES, emitted

pytestmark = pytest.mark.slow


def _run(**parameters: int | str) -> Iterator[EmbeddedRun]:
    base = SCENARIOS["healthy"]
    with simulated_run(replace(base, parameters={**base.parameters, **parameters}), ROOT) as run:
        yield run


@pytest.fixture
def healthy() -> Iterator[EmbeddedRun]:
    yield from _run()


@pytest.fixture
def loaded() -> Iterator[EmbeddedRun]:
    # The simulated slurmctld has 3 server threads: past a threshold of 2, at once.
    yield from _run(OverloadServerThreads=2, OverloadWindowMinutes=0)


@pytest.fixture
def loaded_without_metrics() -> Iterator[EmbeddedRun]:
    yield from _run(OverloadServerThreads=2, OverloadWindowMinutes=0, EarlyWarningMetrics="off")


def _ops_items() -> list[str]:
    ssm = boto3.client("ssm")
    found = ssm.describe_ops_items(
        OpsItemFilters=[{"Key": "Source", "Values": [SOURCE], "Operator": "Equal"}]
    )["OpsItemSummaries"]
    kinds = []
    for summary in found:
        item = ssm.get_ops_item(OpsItemId=summary["OpsItemId"])["OpsItem"]
        kinds.append((item.get("OperationalData") or {}).get(KIND_KEY, {}).get("Value", "?"))
    return kinds


def test_a_tick_writes_each_controllers_figures_and_the_dashboard_finds_them(
    healthy: EmbeddedRun, capsys: pytest.CaptureFixture[str]
) -> None:
    result = healthy.stack.tick()
    assert result["outcome"] == "verified"
    assert result["warnings"] == []
    roles = {figures["controller"]: figures["role"] for figures in result["figures"]}
    assert roles == {"ctl1": "active", "ctl2": "standby"}
    assert result["figures"][0]["server_threads"] == 3
    assert result["figures"][0]["max_dbd_msgs"] == 20008
    found = emitted(capsys.readouterr().out)
    per_controller = {
        (name, tuple(key for key, _ in dimensions)) for _, name, dimensions in found if len(dimensions) == 4
    }
    searched = {line.name for widget in WIDGETS for line in widget.metrics if isinstance(line, PerController)}
    # Every line the dashboard searches for is written with the dimensions it searches by.
    for name in searched - {"RpcAverageMs"}:  # an average needs two ticks' counters
        assert (name, ("cluster", "controller", "role", "service")) in per_controller, name
    cluster_level = {(name, dimensions) for _, name, dimensions in found}
    for name in WATCHDOG_FIGURES:  # as the dashboard's per-cluster lines ask for them
        assert (name, (("cluster", "ml-cluster"), ("service", "hyperpod-ha"))) in cluster_level
    assert _ops_items() == []


def test_an_overloaded_controller_opens_its_incident(loaded: EmbeddedRun) -> None:
    result = loaded.stack.tick()
    (warning,) = result["warnings"]
    assert (warning["kind"], warning["controller"], warning["codes"]) == (
        "controller-overloaded",
        "ctl1",
        ["overloaded-server-threads"],
    )
    assert result["warning_steps"]["controller-overloaded"] == "open"
    assert result["outcome"] == "verified"  # a warning starts no run
    assert _ops_items() == ["controller-overloaded"]
    status = boto3.client("dynamodb").get_item(
        TableName=loaded.stack.ref("StateTable"), Key={"pk": {"S": "status#ml-cluster#warnings"}}
    )["Item"]
    assert json.loads(status["data"]["S"])["warnings"][0]["kind"] == "controller-overloaded"


def test_with_the_metrics_off_a_tick_writes_none_of_them_and_still_warns(
    loaded_without_metrics: EmbeddedRun, capsys: pytest.CaptureFixture[str]
) -> None:
    result = loaded_without_metrics.stack.tick()
    (warning,) = result["warnings"]
    assert warning["codes"] == ["overloaded-server-threads"]
    assert result["figures"][0]["server_threads"] == 3
    assert _ops_items() == ["controller-overloaded"]
    written = {name for _, name, _ in emitted(capsys.readouterr().out)}
    figures = {name for name, _, _ in (*ACTIVE_METRICS, *NODE_METRICS)} | set(CLUSTER_METRICS)
    assert written & figures == set()
    assert "ReadyStandbys" in written  # the watchdog's own metrics are still written
    # Nor the alarm that reads them.
    stack = loaded_without_metrics.stack.name
    alarms = boto3.client("cloudwatch").describe_alarms(AlarmNamePrefix=f"{stack}.")["MetricAlarms"]
    names = {alarm["AlarmName"].removeprefix(f"{stack}.") for alarm in alarms}
    assert "NoStandbyReadyAlarm" in names
    assert "AccountingQueueFillingAlarm" not in names
