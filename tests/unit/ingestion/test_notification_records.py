"""The SNS notifications' idempotency records (issue 36): Powertools' idempotency with a layer
that writes each answer once, after the work; a redelivery is answered from the record by a read
and never does the work again; a failed work leaves nothing behind, so its redelivery does it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent_function
from moto import mock_aws

from hyperpod_ha.ingestion.notification_records import AnswerRecords

TABLE = "idempotency"


class Counted:
    """A DynamoDB client that counts its calls by operation."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._client, name)
        if not callable(found) or name.startswith("_") or name in ("meta", "exceptions"):
            return found

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return found(*args, **kwargs)

        return counted


@pytest.fixture
def dynamodb() -> Iterator[Counted]:
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName=TABLE,
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield Counted(client)


def once(dynamodb: Counted, work: Callable[[str], dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    def handle(record: dict[str, Any]) -> dict[str, Any]:
        return work(record["Sns"]["MessageId"])

    config = IdempotencyConfig(
        event_key_jmespath="Sns.MessageId",
        raise_on_no_idempotency_key=True,
        response_hook=lambda response, _: {**response, "outcome": "duplicate"},
    )
    config.register_lambda_context(Invocation())  # type: ignore[arg-type]
    store = AnswerRecords(table_name=TABLE, boto3_client=dynamodb)  # type: ignore[arg-type]
    return idempotent_function(handle, data_keyword_argument="record", persistence_store=store, config=config)


class Invocation:
    def get_remaining_time_in_millis(self) -> int:
        return 30_000


def record(message_id: str) -> dict[str, Any]:
    return {"Sns": {"MessageId": message_id}}


def test_each_answer_is_written_once_and_a_redelivery_is_answered_from_it(dynamodb: Counted) -> None:
    done: list[str] = []
    handle = once(dynamodb, lambda message: done.append(message) or {"outcome": "joined"})
    assert handle(record=record("m-1")) == {"outcome": "joined"}
    assert (dynamodb.calls["put_item"], dynamodb.calls["update_item"]) == (1, 0)
    assert handle(record=record("m-1")) == {"outcome": "duplicate"}
    assert handle(record=record("m-2")) == {"outcome": "joined"}
    assert done == ["m-1", "m-2"]  # the redelivery did not do the work
    assert dynamodb.calls["put_item"] == 2  # one write per message; a redelivery only reads
    assert dynamodb.calls["delete_item"] == 0


def test_a_failed_work_writes_nothing_and_its_redelivery_does_it(dynamodb: Counted) -> None:
    attempts: list[str] = []

    def work(message: str) -> dict[str, Any]:
        attempts.append(message)
        if len(attempts) == 1:
            raise RuntimeError("the lease could not be read")
        return {"outcome": "started"}

    handle = once(dynamodb, work)
    with pytest.raises(RuntimeError):
        handle(record=record("m-1"))
    assert sum(dynamodb.calls[name] for name in ("put_item", "update_item", "delete_item")) == 0
    assert handle(record=record("m-1")) == {"outcome": "started"}
    assert attempts == ["m-1", "m-1"]


def test_of_two_deliveries_at_once_the_first_answer_stands(dynamodb: Counted) -> None:
    # The other delivery wrote its answer while this one worked (the same, idempotent, work).
    def work(message: str) -> dict[str, Any]:
        other = once(dynamodb, lambda _: {"outcome": "started", "by": "the other delivery"})
        other(record=record(message))
        return {"outcome": "started", "by": "this one"}

    assert once(dynamodb, work)(record=record("m-1")) == {"outcome": "started", "by": "this one"}
    answered = once(dynamodb, lambda _: pytest.fail("a recorded message is not worked again"))
    assert answered(record=record("m-1")) == {"outcome": "duplicate", "by": "the other delivery"}
