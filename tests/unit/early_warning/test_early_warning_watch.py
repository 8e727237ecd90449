"""The watchdog's early warnings over its ticks (early_warning.watch): a warning opens its
incident once it has held for its window, every tick after that asks again (the OpsItem
de-duplicates), the first tick without it resolves that kind only; the sample and the windows
on moto's DynamoDB. The whole path through WatchdogFunction: tests/functions/test_watchdog.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from hyperpod_ha import state_table
from hyperpod_ha.early_warning.models import KIND_ACCOUNTING_AT_RISK, KIND_OVERLOADED
from hyperpod_ha.early_warning.settings import WarningThresholds
from hyperpod_ha.early_warning.watch import EarlyWarningWatch, Held, next_step
from hyperpod_ha.incidents import OpenRequest, ResolveRequest
from hyperpod_ha.incidents.keys import KINDS_NOT_RESOLVED_BY_DEFAULT
from hyperpod_ha.status_records import StatusRecords
from hyperpod_ha.topic_messages import kinds
from hyperpod_ha.watchdog.tick import Tick
from tests.unit.early_warning.cases.loaded import VERDICT, load, reports

TICK = Tick("tick-1", "2026-12-01T10:00:00Z")
WINDOW = 600


@pytest.mark.parametrize(
    ("present", "held", "now", "step"),
    [
        (True, None, 1000, "wait"),
        (True, Held(1000), 1000 + WINDOW - 1, "wait"),  # a burst shorter than the window
        (True, Held(1000), 1000 + WINDOW, "open"),
        (True, Held(1000, opened=True), 5000, "open"),  # again: reminders when due
        (False, Held(1000, opened=True), 5000, "resolve"),
        (False, Held(1000), 1100, "forget"),  # gone within the window: nobody was paged
        (False, None, 5000, "nothing"),
    ],
)
def test_next_step(present: bool, held: Held | None, now: float, step: str) -> None:
    assert next_step(present, held, now, WINDOW) == step


def test_a_window_of_zero_opens_at_the_first_tick() -> None:
    assert next_step(True, None, 1000, 0) == "open"


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


def _watch(table: str, asked: list[dict[str, Any]]) -> EarlyWarningWatch:
    def ask(request: dict[str, Any]) -> dict[str, Any]:
        asked.append(request)
        return {}

    return EarlyWarningWatch("ml-cluster", boto3.client("dynamodb"), table, ask, WarningThresholds())


def test_an_overload_held_for_its_window_opens_then_resolves_by_itself(table: str) -> None:
    asked: list[dict[str, Any]] = []
    watch = _watch(table, asked)
    busy = reports(load(2000, threads=120))
    steps = [watch.check(TICK, VERDICT, busy, now).steps[KIND_OVERLOADED] for now in (2000, 2300, 2600)]
    assert steps == ["wait", "wait", "open"]
    (opened,) = asked
    request = OpenRequest.from_event(opened)  # IncidentFunction takes it as it is
    assert (request.kind, request.verdict) == (KIND_OVERLOADED, "")
    assert request.reasons[0].startswith("ctl1 is slow but alive: server threads 120 (64)")
    assert "codes: overloaded-server-threads" in " ".join(request.reasons)
    # The status record holds the warning and the figures (`hyperpod-ha status`).
    record = StatusRecords(boto3.client("dynamodb"), table).read_one("ml-cluster", "warnings")
    assert record is not None
    assert [w["kind"] for w in record["warnings"]] == [KIND_OVERLOADED]
    assert [f["controller"] for f in record["figures"]] == ["ctl1", "ctl2"]
    calm = watch.check(TICK, VERDICT, reports(load(2900)), 2900)
    assert calm.steps[KIND_OVERLOADED] == "resolve"
    resolved = ResolveRequest.from_event(asked[-1])
    assert resolved.kinds == frozenset({KIND_OVERLOADED})
    assert watch.check(TICK, VERDICT, reports(load(3200)), 3200).steps[KIND_OVERLOADED] == "nothing"
    assert len(asked) == 2


def test_accounting_at_risk_opens_at_the_second_tick_with_the_rate(table: str) -> None:
    asked: list[dict[str, Any]] = []
    watch = _watch(table, asked)
    first = watch.check(TICK, VERDICT, reports(load(2000, queue=100), dbd_answers=False), 2000)
    assert first.steps[KIND_ACCOUNTING_AT_RISK] == "nothing"  # no rate yet
    second = watch.check(TICK, VERDICT, reports(load(2100, queue=2100), dbd_answers=False), 2100)
    assert second.steps[KIND_ACCOUNTING_AT_RISK] == "open"
    (warning,) = second.warnings
    assert warning.figures.dbd_queue_rate == 20.0
    assert OpenRequest.from_event(asked[0]).kind == KIND_ACCOUNTING_AT_RISK
    kept = state_table.read_warnings(boto3.client("dynamodb"), table, "ml-cluster")
    assert kept is not None
    assert '"opened": true' in kept["kinds"]


def test_without_incident_function_the_figures_are_still_kept(table: str) -> None:
    watch = EarlyWarningWatch("ml-cluster", boto3.client("dynamodb"), table, None)
    outcome = watch.check(TICK, VERDICT, reports(load(2000, threads=120)), 9000)
    assert outcome.steps[KIND_OVERLOADED] == "wait"
    assert outcome.to_json()["figures"][0]["server_threads"] == 120


def test_a_record_of_another_form_starts_afresh(table: str) -> None:
    state_table.write_warnings(boto3.client("dynamodb"), table, "ml-cluster", "{not json", "[]", 9999)
    outcome = _watch(table, []).check(TICK, VERDICT, reports(load(2000)), 2000)
    assert outcome.warnings == ()


def test_the_kinds_have_their_rows_and_a_verified_run_leaves_them() -> None:
    assert kinds.kind(KIND_OVERLOADED).severity == "3"
    assert kinds.kind(KIND_ACCOUNTING_AT_RISK).severity == "2"
    assert {KIND_OVERLOADED, KIND_ACCOUNTING_AT_RISK} <= KINDS_NOT_RESOLVED_BY_DEFAULT
