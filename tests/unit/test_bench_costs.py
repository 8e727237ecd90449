"""The benchmark's prices: a workflow run's transitions, the watchdog's month.

Nothing here is timed; the measurements themselves run with ``make bench``.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from bench.watchdog_cost import cost_report, price_per_month, ticks_per_month
from bench.workflow_cost import (
    PRICES,
    count_transitions,
    find_result_object,
    lambda_tasks,
    loop_note,
    price_of_run,
    states_entered,
)

# --- workflow cost ---------------------------------------------------------------------------


def test_transitions_count_every_state_entered_and_every_retry() -> None:
    history = [
        {"type": "ExecutionStarted"},
        {"type": "ChoiceStateEntered"},
        {"type": "TaskStateEntered"},
        {"type": "TaskScheduled", "resource_type": "lambda"},
        {"type": "TaskFailed"},
        {"type": "TaskScheduled", "resource_type": "lambda"},  # Retry
        {"type": "TaskSucceeded"},
        {"type": "MapStateEntered"},
        {"type": "MapIterationStarted"},
        {"type": "TaskStateEntered"},
        {"type": "TaskScheduled", "resource_type": "lambda"},
        {"type": "TaskStateEntered"},
        {"type": "TaskScheduled", "resource_type": "dynamodb"},
        {"type": "SucceedStateEntered"},
        {"type": "ExecutionSucceeded"},
    ]

    assert count_transitions(history) == {"states_entered": 6, "task_retries": 1, "transitions": 7}
    assert lambda_tasks(history) == 3


def test_a_polling_loop_that_makes_most_transitions_is_named() -> None:
    history = (
        [{"type": "TaskStateEntered", "state": "Check the snapshot"}] * 60
        + [{"type": "WaitStateEntered", "state": "Wait for the snapshot"}] * 60
        + [{"type": "ChoiceStateEntered", "state": "Check the request"}, {"type": "TaskScheduled"}]
    )

    by_state = states_entered(history)

    assert by_state == Counter(
        {"Check the snapshot": 60, "Wait for the snapshot": 60, "Check the request": 1}
    )
    note = loop_note(by_state, 121)
    assert note.startswith(
        "100% of the transitions are the states entered most often ('Check the snapshot' 60,"
    )
    assert loop_note(Counter({"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1, "g": 1}), 7) == ""


def test_the_price_of_a_run_uses_the_published_unit_prices() -> None:
    price = price_of_run(1000, [(256, 999.2), (1024, 1.0)])

    assert price["step_functions"] == pytest.approx(0.025)
    assert price["lambda_requests"] == pytest.approx(2 * 0.20 / 1_000_000)
    # 256 MB for 1 s (rounded up to the ms) and 1024 MB for 1 ms.
    assert price["lambda_gb_seconds"] == pytest.approx(0.25 + 0.001)
    assert price["lambda_duration"] == pytest.approx(0.251 * 0.0000133334)
    assert price["total"] == pytest.approx(
        price["step_functions"] + price["lambda_requests"] + price["lambda_duration"]
    )
    assert PRICES.region == "us-east-1"
    assert all(source["url"].startswith("https://aws.amazon.com/") for source in PRICES.sources)


def test_the_scenario_result_is_found_among_log_lines() -> None:
    result = {
        "scenario": "failover",
        "verdict": "FAILED_OVER",
        "incidents": [],
        "snapshots": [{"id": "b-1"}],
        "executions": 1,
    }
    text = "\n".join(
        [
            '{"level": "INFO", "message": "controller checked", "scenario": "not this one"}',
            "plain text {not json",
            json.dumps(result, indent=2),
            '{"level": "INFO", "message": "after"}',
        ]
    )

    assert find_result_object(text) == result
    assert find_result_object('{"level": "INFO"}') is None


def _tick(ms: float, outcome: str = "verified") -> dict[str, Any]:
    calls = {"sagemaker.DescribeCluster": 1, "dynamodb.GetItem": 1}
    return {"outcome": outcome, "error": None, "ms": ms, "log_bytes": 800, "calls": calls}


def test_the_watchdog_month_is_priced_from_list_prices() -> None:
    # 8,760 ticks of 2,000 ms at 128 MB: 2,190 GB-s.
    price = price_per_month(8760, 128, 2000.0, {"dynamodb.GetItem": 1.0}, 1000)
    assert price["lambda_duration"] == pytest.approx(2190 * 0.0000133334)
    assert price["lambda_requests"] == pytest.approx(8760 * 0.20 / 1e6)
    assert price["scheduler"] == pytest.approx(8760 * 1.00 / 1e6)
    assert price["xray_traces"] == pytest.approx(8760 * 5.00 / 1e6)
    assert price["dynamodb"] == pytest.approx(8760 * 0.125 / 1e6)
    assert price["logs"] == pytest.approx(8760 * 1000 / 1e9 * 0.50)
    assert price["total"] == pytest.approx(sum(v for k, v in price.items() if k != "total"))
    assert ticks_per_month(5) == 8760
    assert ticks_per_month(0) == 0


def test_the_watchdog_cost_is_a_check_per_cluster_month() -> None:
    report = cost_report({"ticks": [_tick(2500), _tick(2000), _tick(2100)], "executions": 0}, 128, 40, 5)
    assert report["met"] is True
    assert report["tick_ms"] == {"cold": 2500, "warm_median": 2050}
    assert report["aws_calls_per_tick"] == {"dynamodb.GetItem": 1.0, "sagemaker.DescribeCluster": 1.0}
    assert report["value"] == pytest.approx(report["price_per_month_usd"]["total"], abs=1e-4)
    assert report["ceiling_per_month_usd"]["total"] > report["value"]
    # A tick a minute: five times the ticks of the 5-minute rate, each priced the same.
    fastest = report["at_fastest_rate"]
    assert (fastest["rate_minutes"], fastest["ticks_per_month"]) == (1, 43800)
    assert fastest["price_per_month_usd"]["total"] == pytest.approx(
        5 * report["price_per_month_usd"]["total"], rel=1e-3
    )


def test_a_healthy_tick_that_starts_a_run_is_an_error_not_a_price() -> None:
    report = cost_report({"ticks": [_tick(2000, outcome="started")], "executions": 1}, 128, 40, 5)
    assert "error" in report
    assert "1 executions started" in report["error"]


def test_the_early_warnings_cost_is_their_metrics_calls_and_log_bytes() -> None:
    from bench.watchdog_cost import early_warning_cost

    metrics = [
        ("ServerThreads", "controller=ctl1,role=active"),
        ("RoundTripMs", "controller=ctl2"),
        ("X", ""),
    ]
    per_tick = {"early_warning.dynamodb.GetItem": 1.0, "early_warning.dynamodb.PutItem": 2.0}
    found = early_warning_cost(8760, [{"early_warning_log_bytes": 2000}], per_tick, metrics)
    assert found["metrics"] == 2  # "X" is not theirs
    prices = found["price_per_month_usd"]
    assert prices["cloudwatch_metrics"] == 0.6
    assert prices["dynamodb"] == round(8760 * (0.125 + 2 * 0.625) / 1e6, 5)
    assert prices["logs"] == round(8760 * 2000 / 1e9 * 0.5, 5)
    # After a failover each controller also appears in the other role for the rest of the month.
    assert found["metrics_after_a_failover"] == 2 + 9
