"""The state table's conditional writes: the lease taken once, joined once per trigger,
released only by its holder; a notice marked once; a worker counted once per window."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from hyperpod_ha import state_table
from hyperpod_ha.drill.lease import DrillLease
from hyperpod_ha.lease import Lease, LeaseItemRejected, lease_id_for_drill
from hyperpod_ha.runs.models import Trigger
from hyperpod_ha.runs.settings import RunSettings
from hyperpod_ha.runs.verification_runs import VerificationRuns
from tests.unit.test_lease import DRILL_ARN, TAKEN_AT, recorded


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


def lease(lease_id: str, now: int = 1000, expires_at: int = 2000) -> Lease:
    return Lease(lease_id, f"sns:{lease_id}", f"c-{lease_id}", taken_at=now, expires_at=expires_at)


def test_a_lease_is_taken_once_until_it_expires(ddb: Any) -> None:
    assert state_table.put_lease(ddb, "state", "c", lease("a")) is None
    holder = state_table.put_lease(ddb, "state", "c", lease("b"))
    assert holder is not None
    assert holder.lease_id == "a"
    # Its own holder may take it again; anyone may once it expired.
    assert state_table.put_lease(ddb, "state", "c", lease("a"), retake=True) is None
    assert state_table.put_lease(ddb, "state", "c", lease("b", now=2001, expires_at=3000)) is None
    taken = state_table.read_lease(ddb, "state", "c")
    assert (taken.lease_id if taken else None) == "b"


def test_a_trigger_joins_once_and_only_the_holders_run(ddb: Any) -> None:
    state_table.put_lease(ddb, "state", "c", lease("a"))
    assert state_table.join_lease(ddb, "state", "c", "a", "sns:m-1", record=True) == "joined"
    # Refused: the trigger joined a's run already; b holds no lease.
    assert state_table.join_lease(ddb, "state", "c", "a", "sns:m-1", record=True) == "already joined"
    assert state_table.join_lease(ddb, "state", "c", "b", "sns:m-2", record=True) == "not held"
    held = state_table.read_lease(ddb, "state", "c")
    assert held is not None
    assert (held.lease_id, held.joined, held.joined_count) == ("a", {"sns:m-1"}, 1)


def test_only_the_holder_releases_the_lease(ddb: Any) -> None:
    state_table.put_lease(ddb, "state", "c", lease("a"))
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


def test_restore_actions_are_counted_up_to_the_bound_per_cluster_and_hour(ddb: Any) -> None:
    count = state_table.count_restore_action
    assert state_table.restore_actions(ddb, "state", "c", 500) == 0
    assert count(ddb, "state", "c", 500, at_most=2, expires_at=9000) == 1
    assert count(ddb, "state", "c", 500, at_most=2, expires_at=9000) == 2
    assert count(ddb, "state", "c", 500, at_most=2, expires_at=9000) is None  # the bound: not counted
    assert state_table.restore_actions(ddb, "state", "c", 500) == 2
    # another hour, another cluster: counted on their own
    assert count(ddb, "state", "c", 501, at_most=2, expires_at=9000) == 1
    assert count(ddb, "state", "other", 500, at_most=2, expires_at=9000) == 1
    assert state_table.restore_key("c", 500) == "restore#c#500"


def test_a_join_after_the_lease_is_gone_finds_nothing(ddb: Any) -> None:
    state_table.put_lease(ddb, "state", "c", lease("a"))
    state_table.release_lease(ddb, "state", "c", "a")
    # Nobody holds the lease, so the caller takes it again.
    assert state_table.join_lease(ddb, "state", "c", "a", "sns:m-1", record=True) == "not held"


def test_a_write_that_fails_for_another_reason_is_raised(ddb: Any) -> None:
    from botocore.exceptions import ClientError
    from botocore.stub import Stubber

    with Stubber(ddb) as stub:
        stub.add_client_error("put_item", service_error_code="ThrottlingException")
        with pytest.raises(ClientError, match="ThrottlingException"):
            state_table.put_lease(ddb, "state", "c", lease("a"))


def test_a_refused_take_without_its_holder_is_a_typed_error(ddb: Any) -> None:
    # DynamoDB returns the item a condition failed on; a holder we cannot see is never "free".
    from botocore.stub import Stubber

    with Stubber(ddb) as stub:
        stub.add_client_error("put_item", service_error_code="ConditionalCheckFailedException")
        with pytest.raises(LeaseItemRejected, match="returned no holder"):
            state_table.put_lease(ddb, "state", "c", lease("a"))


# --- the items a deployed table holds (tests/fixtures/lease_items) ---------------------------


def stored(ddb: Any) -> dict[str, Any]:
    item: dict[str, Any] = ddb.get_item(
        TableName="state", Key=state_table.key(state_table.lease_key("ml-cluster"))
    )["Item"]
    return item


def test_runs_and_drills_write_the_items_the_code_before_wrote(ddb: Any) -> None:
    sfn = boto3.client("stepfunctions", region_name="us-east-1")
    machine = sfn.create_state_machine(
        name="verify",
        definition=json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Pass", "End": True}}}),
        roleArn="arn:aws:iam::123456789012:role/verify",
    )["stateMachineArn"]
    runs = VerificationRuns(ddb, sfn, "state", machine, RunSettings(), clock=lambda: float(TAKEN_AT))
    assert runs.start_or_join("ml-cluster", Trigger("sns", "m-1"), "test").outcome == "started"
    assert stored(ddb) == recorded("run_taken")
    for message in ("m-2", "m-3"):
        assert runs.start_or_join("ml-cluster", Trigger("sns", message), "test").outcome == "joined"
    assert stored(ddb) == recorded("run_joined")
    assert runs.release("ml-cluster", "9ad3db36cd521f266ad8")
    drill = DrillLease(ddb, "state", 3600, clock=lambda: float(TAKEN_AT))
    assert drill.take("ml-cluster", lease_id_for_drill(DRILL_ARN), DRILL_ARN) is None
    assert stored(ddb) == recorded("drill_taken")


@pytest.mark.parametrize(
    ("name", "kind", "execution"),
    [
        (
            "run_joined",
            "verification",
            "arn:aws:states:us-east-1:123456789012:execution:verify:ml-cluster-9ad3db36cd521f266ad8",
        ),
        ("drill_taken", "drill", DRILL_ARN),
    ],
)
def test_the_status_view_shows_the_holder_of_a_deployed_item(
    ddb: Any, name: str, kind: str, execution: str
) -> None:
    from hyperpod_ha_cli import status

    ddb.put_item(TableName="state", Item=recorded(name))
    outputs = {
        "FailoverVerificationStateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:verify"
    }
    shown = status._in_progress(outputs, "state", "ml-cluster", "us-east-1", clock=lambda: TAKEN_AT + 60.0)
    expired = status._in_progress(
        outputs, "state", "ml-cluster", "us-east-1", clock=lambda: TAKEN_AT + 3601.0
    )
    assert expired is None
    assert shown is not None
    lease = Lease.from_item(recorded(name))
    assert (shown["kind"], shown["execution_arn"], shown["lease_holder"]) == (kind, execution, lease.trigger)
    assert (shown["since"], shown["joined"]) == (TAKEN_AT, lease.joined_count)
