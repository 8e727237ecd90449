"""WatchdogFunction on the embedded stack: ticks delivered from the template's schedule, the
probe on simulated controllers, runs through the same lease as every other trigger."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import boto3
import pytest

from hyperpod_ha_dev.embedded import delivery
from hyperpod_ha_dev.embedded.functions import new_containers
from hyperpod_ha_dev.simulation.engine import EmbeddedRun, simulated_run
from hyperpod_ha_dev.simulation.scenarios import (
    DOWN_BACKUP,
    DOWN_PRIMARY,
    PRIMARY,
    SCENARIOS,
    STANDBY,
    Scenario,
)
from tests.conftest import EVENTS, ROOT

pytestmark = pytest.mark.slow


def scenario(name: str, **parameters: int) -> Scenario:
    base = SCENARIOS[name]
    return replace(base, parameters={**base.parameters, **parameters})


def run_input(execution_arn: str) -> dict[str, Any]:
    described = boto3.client("stepfunctions").describe_execution(executionArn=execution_arn)
    loaded: dict[str, Any] = json.loads(described["input"])
    return loaded


def dead_letters(run: EmbeddedRun) -> list[dict[str, Any]]:
    sqs = boto3.client("sqs")
    url = run.stack.ref("WatchdogDeadLetterQueue")
    messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
    return [json.loads(m["Body"]) for m in messages]


def wait_until_ended(run: EmbeddedRun, count: int, timeout: float = 120) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        executions = run.stack.executions()
        if len(executions) == count and all(e["status"] != "RUNNING" for e in executions):
            return executions
        time.sleep(0.2)
    raise TimeoutError(f"{count} runs did not end within {timeout} s")


@pytest.fixture
def healthy() -> Iterator[EmbeddedRun]:
    with simulated_run(scenario("healthy"), ROOT) as run:
        yield run


def test_a_tick_on_a_healthy_cluster_starts_no_workflow(healthy: EmbeddedRun) -> None:
    result = healthy.stack.tick()
    assert (result["outcome"], result["verdict"], result["controllers"]) == ("verified", "HEALTHY", 2)
    assert healthy.stack.executions() == []
    # Scheduler's context attributes were filled in from the template's schedule Input.
    tick = delivery.deliveries[-1].event
    assert tick["source"] == "hyperpod-ha.watchdog"
    assert not tick["tick_id"].startswith("<")
    assert dead_letters(healthy) == []


def test_a_silent_failure_starts_one_run_and_the_next_tick_joins_it() -> None:
    # Held 600 s before its first check: the run is still active at the second tick.
    with simulated_run(scenario("silent-failure", SettleSeconds=600), ROOT) as run:
        first = run.stack.tick()
        second = run.stack.tick()
        assert (first["outcome"], first["verdict"]) == ("started", "DOWN")
        assert second["outcome"] == "joined"
        (execution,) = run.stack.executions()
        assert execution["executionArn"] == first["execution_arn"]
        trigger = run_input(execution["executionArn"])["trigger"]
        assert trigger["source"] == "watchdog"
        assert trigger["id"] == delivery.deliveries[0].event["tick_id"]
        assert trigger["time"] == delivery.deliveries[0].event["scheduled_time"].replace("Z", ".000Z")
        assert trigger["summary"]["verdict"] == "DOWN"
        run.stack.stop_running_executions()


# Down for the tick and the run's three checks, then back without publishing anything.
RECOVERING = replace(
    SCENARIOS["silent-failure"],
    ctl1=(DOWN_PRIMARY,) * 4 + (PRIMARY,),
    ctl2=(DOWN_BACKUP,) * 4 + (STANDBY,),
)


def test_one_incident_opens_and_the_first_verified_tick_after_it_resolves_it() -> None:
    with simulated_run(RECOVERING, ROOT) as run:
        assert run.stack.tick()["outcome"] == "started"
        (failed,) = wait_until_ended(run, 1)
        assert failed["status"] == "FAILED"
        recovered = run.stack.tick()
        assert (recovered["outcome"], recovered["verdict"], recovered["recovery"]) == (
            "started",
            "HEALTHY",
            True,
        )
        wait_until_ended(run, 2)
        # The cluster stays healthy: the next tick starts nothing.
        assert run.stack.tick()["outcome"] == "verified"
        result = run.finish(replace(RECOVERING, expect_verdict="HEALTHY", expect_executions=2))
    assert [e["status"] for e in result.executions] == ["FAILED", "SUCCEEDED"]
    (incident,) = result.incidents
    assert "DOWN" in incident["title"]
    assert incident["status"] == "Resolved"
    assert result.lease_released


def logged_errors(caplog: pytest.LogCaptureFixture, message: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.getMessage() == message and r.levelno == logging.ERROR]


def test_a_bad_tick_is_rejected_logged_counted_and_kept(
    healthy: EmbeddedRun, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    untemplated = json.loads((EVENTS / "scheduler_watchdog_untemplated.json").read_text())
    assert delivery.invoke_async(healthy.stack.function("WatchdogFunction"), untemplated) is None
    (error,) = logged_errors(caplog, "watchdog tick rejected")
    assert "tick_id" in error.reason  # type: ignore[attr-defined]
    assert '"WatchdogTicksRejected"' in capsys.readouterr().out
    (kept,) = dead_letters(healthy)
    assert kept == untemplated
    assert healthy.stack.executions() == []


@pytest.mark.parametrize(
    ("variables", "reason"),
    [
        ({"STATE_MACHINE_ARN": ""}, "STATE_MACHINE_ARN is not set"),
        ({"COMMAND_TRANSPORT": "carrier-pigeon"}, "unknown command transport"),
        ({"PROBE_DEADLINE_SECONDS": "soon"}, "PROBE_DEADLINE_SECONDS is not a number"),
        ({"CONTROLLER_GROUP": "no-such-group"}, "no instance group named 'no-such-group'"),
        ({"CLUSTER_NAME": "no-such-cluster"}, "no-such-cluster"),
    ],
)
def test_bad_configuration_is_an_error_and_a_metric_never_a_silent_tick(
    healthy: EmbeddedRun,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    variables: dict[str, str],
    reason: str,
) -> None:
    healthy.stack.override_environment("WatchdogFunction", **variables)
    new_containers()
    tick = json.loads((EVENTS / "scheduler_watchdog_tick.json").read_text())
    assert delivery.invoke_async(healthy.stack.function("WatchdogFunction"), tick) is None
    (error,) = logged_errors(caplog, "watchdog configuration is wrong")
    assert reason in error.reason  # type: ignore[attr-defined]
    assert '"WatchdogConfigurationErrors"' in capsys.readouterr().out
    assert len(dead_letters(healthy)) == 1
    assert healthy.stack.executions() == []


def test_the_schedule_invokes_only_the_watchdog(healthy: EmbeddedRun) -> None:
    schedule = boto3.client("scheduler").get_schedule(Name=healthy.stack.ref("WatchdogSchedule"))
    assert schedule["ScheduleExpression"] == "rate(5 minutes)"
    assert schedule["Target"]["Arn"] == healthy.stack.function("WatchdogFunction").arn
    queue = healthy.stack.ref("WatchdogDeadLetterQueue")
    attributes = boto3.client("sqs").get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])
    assert schedule["Target"]["DeadLetterConfig"]["Arn"] == attributes["Attributes"]["QueueArn"]
    role = healthy.stack.ref("WatchdogScheduleRole")
    (policy,) = boto3.client("iam").list_role_policies(RoleName=role)["PolicyNames"]
    document = boto3.client("iam").get_role_policy(RoleName=role, PolicyName=policy)["PolicyDocument"]
    invoke, dead_letter = document["Statement"]
    assert (invoke["Action"], invoke["Resource"]) == (
        "lambda:InvokeFunction",
        healthy.stack.function("WatchdogFunction").arn,
    )
    assert dead_letter["Action"] == "sqs:SendMessage"


@pytest.mark.parametrize(
    ("rate", "expression", "period"),
    [
        (0, None, None),
        (1, "rate(1 minute)", 300),
        (15, "rate(15 minutes)", 900),
        (60, "rate(60 minutes)", 3600),
    ],
)
def test_the_rate_sets_the_schedule_and_the_no_standby_alarms_period_and_zero_turns_both_off(
    rate: int, expression: str | None, period: int | None
) -> None:
    from hyperpod_ha_dev.embedded.site import create_site, embedded_aws
    from hyperpod_ha_dev.embedded.stack import create_stack

    with embedded_aws():
        site = create_site()
        site.extra_parameters["WatchdogRateMinutes"] = rate
        stack = create_stack(ROOT, site.stack_parameters())
        schedules = boto3.client("scheduler").list_schedules()["Schedules"]
        # A period holds a tick whatever the rate; without ticks (a run's end alone) no alarm.
        alarms = boto3.client("cloudwatch").describe_alarms(AlarmNamePrefix=f"{stack.name}.NoStandbyReady")
        assert [alarm["Period"] for alarm in alarms["MetricAlarms"]] == ([period] if period else [])
        if expression is None:
            assert "WatchdogFunction" not in stack.functions
            assert "WatchdogScheduleName" not in stack.outputs
            assert schedules == []
        else:
            (schedule,) = schedules
            described = boto3.client("scheduler").get_schedule(Name=schedule["Name"])
            assert described["ScheduleExpression"] == expression
            assert stack.outputs["WatchdogScheduleName"] == schedule["Name"]
