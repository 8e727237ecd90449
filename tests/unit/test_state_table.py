"""The state table's conditional writes: the lease taken once, joined once per trigger,
released only by its holder; a notice marked once; a worker counted once per window."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from hyperpod_ha import state_table


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


def lease(lease_id: str, expires_at: int = 2000) -> dict[str, Any]:
    return {
        **state_table.key(state_table.lease_key("c")),
        "lease_id": {"S": lease_id},
        "expires_at": {"N": str(expires_at)},
    }


def test_a_lease_is_taken_once_until_it_expires(ddb: Any) -> None:
    assert state_table.put_lease(ddb, "state", lease("a"), now=1000) is None
    holder = state_table.put_lease(ddb, "state", lease("b"), now=1000)
    assert (holder or {}).get("lease_id", {}).get("S") == "a"
    # Its own holder may take it again; anyone may once it expired.
    assert state_table.put_lease(ddb, "state", lease("a"), now=1000, lease_id="a") is None
    assert state_table.put_lease(ddb, "state", lease("b"), now=2001) is None
    assert (state_table.read_lease(ddb, "state", "c") or {})["lease_id"]["S"] == "b"


def test_a_trigger_joins_once_and_only_the_holders_run(ddb: Any) -> None:
    state_table.put_lease(ddb, "state", lease("a"), now=1000)
    assert state_table.join_lease(ddb, "state", "c", "a", "sns:m-1", record=True) is None
    again = state_table.join_lease(ddb, "state", "c", "a", "sns:m-1", record=True)
    assert (again or {}).get("lease_id", {}).get("S") == "a"
    other = state_table.join_lease(ddb, "state", "c", "b", "sns:m-2", record=True)
    assert (other or {}).get("lease_id", {}).get("S") == "a"
    item = state_table.read_lease(ddb, "state", "c") or {}
    assert (item["joined"]["SS"], item["joined_count"]["N"]) == (["sns:m-1"], "1")


def test_only_the_holder_releases_the_lease(ddb: Any) -> None:
    state_table.put_lease(ddb, "state", lease("a"), now=1000)
    assert not state_table.release_lease(ddb, "state", "c", "b")
    assert state_table.release_lease(ddb, "state", "c", "a")
    assert state_table.read_lease(ddb, "state", "c") is None


def test_a_notice_is_marked_once_until_forgotten(ddb: Any) -> None:
    marker = state_table.notice_key("c", "event-1")
    assert state_table.mark_notice(ddb, "state", marker, expires_at=2000)
    assert not state_table.mark_notice(ddb, "state", marker, expires_at=2000)
    state_table.forget_notice(ddb, "state", marker)
    assert state_table.mark_notice(ddb, "state", marker, expires_at=2000)


def test_a_worker_counts_once_per_window(ddb: Any) -> None:
    assert state_table.count_worker(ddb, "state", "c", 600, "i-1", expires_at=1800) == 1
    assert state_table.count_worker(ddb, "state", "c", 600, "i-1", expires_at=1800) is None
    assert state_table.count_worker(ddb, "state", "c", 600, "i-2", expires_at=1800) == 2
    state_table.uncount_worker(ddb, "state", "c", 600, "i-2")
    assert state_table.count_worker(ddb, "state", "c", 600, "i-2", expires_at=1800) == 2
    assert state_table.workers_key("c", 600).startswith(state_table.workers_prefix("c"))


def test_a_join_after_the_lease_is_gone_finds_nothing(ddb: Any) -> None:
    state_table.put_lease(ddb, "state", lease("a"), now=1000)
    state_table.release_lease(ddb, "state", "c", "a")
    # {} (not None): nobody holds the lease, so the caller takes it again.
    assert state_table.join_lease(ddb, "state", "c", "a", "sns:m-1", record=True) == {}


def test_a_write_that_fails_for_another_reason_is_raised(ddb: Any) -> None:
    from botocore.exceptions import ClientError
    from botocore.stub import Stubber

    with Stubber(ddb) as stub:
        stub.add_client_error("put_item", service_error_code="ThrottlingException")
        with pytest.raises(ClientError, match="ThrottlingException"):
            state_table.put_lease(ddb, "state", lease("a"), now=1000)
