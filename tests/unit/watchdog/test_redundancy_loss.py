"""The redundancy-lost incident the watchdog's ticks drive: opened after the grace (not before),
on every tick after it (the OpsItem de-duplicates, reminders come when due), resolved at the
first tick that sees a ready standby, untouched by ``unknown``. The record's DynamoDB side is
tested here on moto's DynamoDB, the whole path on the embedded stack in
tests/functions/test_watchdog_redundancy.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from hyperpod_ha import state_table
from hyperpod_ha.errors import ConfigurationError
from hyperpod_ha.incidents import OpenRequest, ResolveRequest
from hyperpod_ha.incidents.keys import KIND_REDUNDANCY_LOST, KINDS_NOT_RESOLVED_BY_DEFAULT
from hyperpod_ha.topic_messages import kinds
from hyperpod_ha.verdict import FAILED_OVER, HEALTHY, Verdict
from hyperpod_ha.verdict.reasons import Reason, ReasonCode
from hyperpod_ha.watchdog import redundancy_loss
from hyperpod_ha.watchdog.function import WatchdogFunctionSettings
from hyperpod_ha.watchdog.redundancy_loss import (
    Loss,
    RedundancyWatch,
    next_step,
    open_request,
    resolve_request,
)
from hyperpod_ha.watchdog.tick import Tick
from tests.unit.watchdog.test_watchdog_function import ENVIRONMENT

GRACE = 600
TICK = Tick("tick-1", "2026-12-01T10:00:00Z")


@pytest.mark.parametrize(
    ("level", "loss", "now", "step"),
    [
        ("none", None, 1000, "start"),
        ("none", Loss(1000), 1000 + GRACE - 1, "wait"),  # a planned restart shorter than the grace
        ("none", Loss(1000), 1000 + GRACE, "open"),
        ("none", Loss(1000, opened=True), 1000 + 5 * GRACE, "open"),  # again: reminders when due
        ("reduced", Loss(1000, opened=True), 2000, "resolve"),
        ("full", Loss(1000, opened=True), 2000, "resolve"),
        ("full", Loss(1000), 1100, "forget"),  # back within the grace: nobody was paged
        ("full", None, 2000, "nothing"),
        ("unknown", Loss(1000, opened=True), 9000, "nothing"),  # no evidence either way
        ("unknown", None, 9000, "nothing"),
    ],
)
def test_next_step(level: str, loss: Loss | None, now: float, step: str) -> None:
    assert next_step(level, loss, now, GRACE) == step


def test_a_grace_of_zero_opens_at_the_first_tick_that_records_the_loss() -> None:
    assert next_step("none", Loss(1000), 1000, 0) == "open"


def _lost() -> Verdict:
    evidence = {
        "ctl1": {"instance_id": "i-01", "target": "sagemaker-cluster:abc_controller-i-01", "active": False},
        "ctl2": {"instance_id": "i-02", "target": "sagemaker-cluster:abc_controller-i-02", "active": True},
    }
    return Verdict(
        FAILED_OVER,
        (Reason(ReasonCode.BACKUP_TOOK_OVER, "ctl2 (SlurmctldHost[1]) took over from ctl1"),),
        "ctl2",
        "ctl1",
        evidence,
        redundancy="none",
        not_ready={"ctl1": "slurmctld not running"},
    )


def test_the_open_request_names_the_active_controller_and_the_action_that_restores_it() -> None:
    event = open_request("ml-cluster", TICK, _lost(), since=1000, now=1000 + 720)
    request = OpenRequest.from_event(event)  # IncidentFunction takes it as it is
    assert (request.kind, request.verdict, request.execution_id) == (
        KIND_REDUNDANCY_LOST,
        "",
        "hyperpod-watchdog:tick-1",
    )
    assert request.reasons[0] == "no standby has been ready for 12 min: one more failure stops the cluster"
    assert request.reasons[1] == "ctl2 is active (FAILED_OVER)"
    assert request.reasons[2] == (
        "ctl1: slurmctld not running: to restore it, run `sudo systemctl start slurmctld` on ctl1 "
        "(aws ssm start-session --target sagemaker-cluster:abc_controller-i-01)"
    )
    assert request.run_start is not None
    assert request.run_start.trigger.source == "watchdog"


STOPPED_RESTORE = {
    "mode": "standbys",
    "verdict": "HEALTHY",
    "active_controller": "ctl1",
    "stopped": "restoring stopped: 2 restore actions on this cluster this hour already (RestoreMaxPerHour=2)",
    "actions": [],
    "not_taken": [{"controller": "ctl2", "kind": "start-slurmctld", "command": "aws ssm start-session ..."}],
}


def test_the_open_request_says_what_the_last_restore_did_during_the_loss() -> None:
    # A grace longer than the restores: they ran, and stopped, before the incident opened.
    record = {**STOPPED_RESTORE, "recorded_at": 1000 + 300}
    request = OpenRequest.from_event(open_request("ml-cluster", TICK, _lost(), 1000, 1000 + 600, record))
    said = [r for r in request.reasons if r.startswith("the last restore, 5 min ago: ")]
    assert said[1] == f"the last restore, 5 min ago: {STOPPED_RESTORE['stopped']}"
    assert said[-1] == "the last restore, 5 min ago: ctl2: by hand: aws ssm start-session ..."


@pytest.mark.parametrize(
    "record",
    [
        None,
        {**STOPPED_RESTORE, "recorded_at": 1000 - 3601},  # before the loss and its hour
        {"mode": "standbys", "verdict": "HEALTHY", "actions": [], "recorded_at": 1200},  # did nothing
    ],
)
def test_a_restore_before_the_loss_or_one_that_did_nothing_is_not_said(record: dict[str, Any] | None) -> None:
    assert redundancy_loss.last_restore_lines(record, 1000, 1600) == []


def test_the_resolve_request_resolves_redundancy_lost_only() -> None:
    healthy = Verdict(
        HEALTHY,
        (Reason(ReasonCode.PRIMARY_ACTIVE, "ctl1 is active"),),
        "ctl1",
        "ctl1",
        redundancy="full",
        standbys=("ctl2",),
    )
    request = ResolveRequest.from_event(resolve_request("ml-cluster", TICK, healthy))
    assert request.kinds == frozenset({KIND_REDUNDANCY_LOST})
    assert request.covers(KIND_REDUNDANCY_LOST)
    assert not request.covers("DOWN")
    assert request.reasons[0] == "ready standby again: ctl2 (redundancy full)"


def test_a_verified_run_does_not_resolve_it() -> None:
    """A FAILED_OVER run resolves what was open, but not redundancy-lost: it may have none left."""
    everything = ResolveRequest("ml-cluster", "FAILED_OVER", "arn:aws:states:us-east-1:1:execution:x:y")
    assert KIND_REDUNDANCY_LOST in KINDS_NOT_RESOLVED_BY_DEFAULT
    assert not everything.covers(KIND_REDUNDANCY_LOST)


def test_the_kind_is_one_name_with_its_row() -> None:
    assert redundancy_loss.KIND_REDUNDANCY_LOST == KIND_REDUNDANCY_LOST
    row = kinds.kind(KIND_REDUNDANCY_LOST)
    assert row.severity == "3"
    assert row.incident
    assert any("systemctl start slurmctld" in line for line in row.look_at)


@pytest.mark.parametrize(
    ("minutes", "seconds"),
    [(None, 600), ("0", 0), ("1440", 86400), ("2.5", None), ("-1", None), ("1441", None)],
)
def test_the_grace_setting(minutes: str | None, seconds: int | None) -> None:
    env: dict[str, Any] = dict(ENVIRONMENT)
    if minutes is not None:
        env["REDUNDANCY_GRACE_MINUTES"] = minutes
    if seconds is None:
        with pytest.raises(ConfigurationError, match="REDUNDANCY_GRACE_MINUTES"):
            WatchdogFunctionSettings.from_environment(env)
    else:
        assert WatchdogFunctionSettings.from_environment(env).redundancy_grace_seconds == seconds


@pytest.fixture
def table() -> Iterator[str]:
    with mock_aws():
        boto3.client("dynamodb").create_table(
            TableName="state",
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield "state"


def _watch(table: str, asked: list[dict[str, Any]], grace: int = GRACE) -> RedundancyWatch:
    return RedundancyWatch("ml-cluster", boto3.client("dynamodb"), table, _asking(asked), grace)


def _asking(asked: list[dict[str, Any]]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def ask(request: dict[str, Any]) -> dict[str, Any]:
        asked.append(request)
        return {}

    return ask


def test_one_loss_over_the_ticks_opens_once_past_the_grace_then_resolves(table: str) -> None:
    asked: list[dict[str, Any]] = []
    watch = _watch(table, asked)
    lost = _lost()
    back = Verdict(HEALTHY, (), "ctl1", "ctl1", redundancy="full", standbys=("ctl2",))
    steps = [watch.check(TICK, lost, now) for now in (1000, 1300, 1600, 1900)]
    assert steps == ["start", "wait", "open", "open"]
    assert [r["action"] for r in asked] == ["open", "open"]
    assert state_table.read_redundancy_loss(boto3.client("dynamodb"), table, "ml-cluster") == {
        "since": 1000,
        "opened": True,
    }
    assert watch.check(TICK, back, 2000) == "resolve"
    assert asked[-1]["action"] == "resolve"
    assert asked[-1]["kinds"] == [KIND_REDUNDANCY_LOST]
    assert state_table.read_redundancy_loss(boto3.client("dynamodb"), table, "ml-cluster") is None
    assert watch.check(TICK, back, 2100) == "nothing"
    assert len(asked) == 3


def test_a_failed_open_is_raised_and_the_next_tick_opens_again(table: str) -> None:
    def failing(request: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("IncidentFunction failed")

    watch = RedundancyWatch("ml-cluster", boto3.client("dynamodb"), table, failing, 0)
    with pytest.raises(RuntimeError):
        watch.check(TICK, _lost(), 1000)
    # Not marked opened: nothing to resolve later unless an open went through.
    assert state_table.read_redundancy_loss(boto3.client("dynamodb"), table, "ml-cluster") == {
        "since": 1000,
        "opened": False,
    }
    asked: list[dict[str, Any]] = []
    assert _watch(table, asked, 0).check(TICK, _lost(), 1060) == "open"
    assert len(asked) == 1


def test_of_two_ticks_at_once_the_first_start_holds(table: str) -> None:
    ddb = boto3.client("dynamodb")
    assert state_table.start_redundancy_loss(ddb, table, "ml-cluster", 1000, 9999) == 1000
    assert state_table.start_redundancy_loss(ddb, table, "ml-cluster", 1005, 9999) == 1000
    # An end of an older loss leaves a newer one alone; marking one that ended does nothing.
    state_table.end_redundancy_loss(ddb, table, "ml-cluster", 999)
    state_table.mark_redundancy_incident(ddb, table, "ml-cluster", 999)
    assert state_table.read_redundancy_loss(ddb, table, "ml-cluster") == {"since": 1000, "opened": False}
    state_table.end_redundancy_loss(ddb, table, "ml-cluster", 1000)
    assert state_table.read_redundancy_loss(ddb, table, "ml-cluster") is None
