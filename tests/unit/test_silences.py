"""The operator's silences: bounded, one in force at a time, ended early once, kept for the audit."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from hyperpod_ha import state_table
from hyperpod_ha.silences import (
    AUDIT_SECONDS,
    HISTORY_KEPT,
    MAX_REASON_CHARS,
    MAX_SECONDS,
    Silence,
    SilenceConflict,
    SilenceRejected,
    Silences,
    silence_reason,
)

ALICE = "arn:aws:sts::123456789012:assumed-role/oncall/alice"
BOB = "arn:aws:iam::123456789012:user/bob"


class Clock:
    def __init__(self, now: float = 1_800_000_000) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def ddb() -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName="state",
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield client


def test_a_silence_is_in_force_until_its_end_then_not(ddb: Any) -> None:
    clock = Clock()
    silences = Silences(ddb, "state", clock)
    started = silences.start("ml-cluster", 7200, "  kernel upgrade on the controllers ", ALICE)
    assert started.until == started.started_at + 7200
    assert started.reason == "kernel upgrade on the controllers"
    assert silences.in_force("ml-cluster") == started
    assert silences.in_force("other-cluster") is None
    clock.now += 7199
    assert silences.in_force("ml-cluster") == started
    clock.now += 1  # its end: expired, whether or not DynamoDB's TTL has deleted the item
    assert silences.in_force("ml-cluster") is None
    item = state_table.read_silence(ddb, "state", "ml-cluster")
    assert item is not None
    assert int(item["expires_at"]) == started.until + AUDIT_SECONDS


@pytest.mark.parametrize("seconds", [MAX_SECONDS + 1, 59, 0, -60, 10**9])
def test_a_silence_longer_than_the_bound_or_too_short_is_refused(ddb: Any, seconds: int) -> None:
    silences = Silences(ddb, "state", Clock())
    with pytest.raises(SilenceRejected, match="24 h"):
        silences.start("ml-cluster", seconds, "maintenance", ALICE)
    assert state_table.read_silence(ddb, "state", "ml-cluster") is None


def test_the_longest_silence_is_the_bound(ddb: Any) -> None:
    silence = Silences(ddb, "state", Clock()).start("ml-cluster", MAX_SECONDS, "maintenance", ALICE)
    assert silence.until - silence.started_at == MAX_SECONDS


@pytest.mark.parametrize(
    ("reason", "why"),
    [
        ("x" * (MAX_REASON_CHARS + 1), "longer than 512"),
        ("   ", "needs a reason"),
        ("two\nlines", "one line"),
    ],
)
def test_a_reason_out_of_bounds_is_refused(ddb: Any, reason: str, why: str) -> None:
    with pytest.raises(SilenceRejected, match=why):
        Silences(ddb, "state", Clock()).start("ml-cluster", 3600, reason, ALICE)


def test_a_reason_is_redacted_and_stays_within_the_bound() -> None:
    kept = silence_reason("rotating: password=hunter2 on the db")
    assert "hunter2" not in kept
    assert len(silence_reason("password=" + "s" * (MAX_REASON_CHARS - 9))) <= MAX_REASON_CHARS


def test_a_caller_that_is_not_an_arn_is_refused(ddb: Any) -> None:
    with pytest.raises(SilenceRejected, match="not an ARN"):
        Silences(ddb, "state", Clock()).start("ml-cluster", 3600, "maintenance", "alice")


def test_one_silence_in_force_at_a_time(ddb: Any) -> None:
    silences = Silences(ddb, "state", Clock())
    silences.start("ml-cluster", 3600, "maintenance", ALICE)
    with pytest.raises(SilenceConflict, match=r"in force.*end it first"):
        silences.start("ml-cluster", 3600, "another", BOB)


def test_ended_early_it_is_no_longer_in_force_and_says_who_ended_it(ddb: Any) -> None:
    clock = Clock()
    silences = Silences(ddb, "state", clock)
    started = silences.start("ml-cluster", 3600, "maintenance", ALICE)
    clock.now += 600
    ended = silences.end("ml-cluster", BOB)
    assert (ended.ended_at, ended.ended_by, ended.ends_at) == (started.started_at + 600, BOB, ended.ended_at)
    assert silences.in_force("ml-cluster") is None
    assert silences.read("ml-cluster").last == ended


def test_ending_an_ended_or_expired_silence_is_refused(ddb: Any) -> None:
    clock = Clock()
    silences = Silences(ddb, "state", clock)
    with pytest.raises(SilenceConflict, match="no silence is in force"):
        silences.end("ml-cluster", BOB)
    silences.start("ml-cluster", 3600, "maintenance", ALICE)
    silences.end("ml-cluster", BOB)
    with pytest.raises(SilenceConflict, match="no silence is in force"):
        silences.end("ml-cluster", BOB)
    silences.start("ml-cluster", 60, "short", ALICE)
    clock.now += 60
    with pytest.raises(SilenceConflict, match="no silence is in force"):
        silences.end("ml-cluster", BOB)


def test_an_end_that_lost_the_race_is_refused(ddb: Any) -> None:
    clock = Clock()
    silences = Silences(ddb, "state", clock)
    started = silences.start("ml-cluster", 3600, "maintenance", ALICE)
    # Another operator ended it between this one's read and write.
    now = int(clock.now)
    assert state_table.end_silence(ddb, "state", "ml-cluster", started.silence_id, now, BOB) is None
    assert state_table.end_silence(ddb, "state", "ml-cluster", started.silence_id, now, ALICE)


def test_past_silences_are_kept_newest_first_and_bounded(ddb: Any) -> None:
    clock = Clock()
    silences = Silences(ddb, "state", clock)
    for number in range(HISTORY_KEPT + 3):
        silences.start("ml-cluster", 60, f"window {number}", ALICE)
        clock.now += 61
    record = silences.read("ml-cluster")
    assert record.last is not None
    assert record.last.reason == f"window {HISTORY_KEPT + 2}"
    assert [s.reason for s in record.history[:2]] == [f"window {HISTORY_KEPT + 1}", f"window {HISTORY_KEPT}"]
    assert len(record.history) == HISTORY_KEPT
    assert record.to_json(clock.now)["in_force"] is None


def test_a_start_that_lost_the_race_is_refused(ddb: Any) -> None:
    clock = Clock()
    first = Silences(ddb, "state", clock).start("ml-cluster", 60, "first", ALICE)
    clock.now += 120
    other = {**first.to_json(), "silence_id": "other", "reason": "second"}
    del other["ended_at"], other["ended_by"]
    # Two starts read the first silence, ended: the first write wins, the second finds "other".
    now = int(clock.now)
    assert state_table.put_silence(ddb, "state", "ml-cluster", other, first.silence_id, now) is None
    found = state_table.put_silence(ddb, "state", "ml-cluster", other, first.silence_id, now)
    assert found is not None
    assert found["silence_id"] == "other"
    # Nor is a first silence written over one written meanwhile.
    assert state_table.put_silence(ddb, "state", "ml-cluster", other, None, now)


def test_a_silence_that_cannot_be_read_pages(ddb: Any) -> None:
    ddb.put_item(TableName="state", Item={"pk": {"S": "silence#ml-cluster"}, "until": {"S": "soon"}})
    assert Silences(ddb, "state", Clock()).in_force("ml-cluster") is None
    assert Silences(ddb, "no-such-table", Clock()).in_force("ml-cluster") is None


def test_an_item_claiming_more_than_the_bound_is_not_believed() -> None:
    values = Silence("ml-cluster", "id", 0, MAX_SECONDS + 1, ALICE, "r").to_json()
    with pytest.raises(SilenceRejected):
        Silence.from_values(values)
