"""The lease as a value: it reads the items deployed tables hold (recorded from the code before
it), writes them back the same, makes the same ids, expires when its time is past, knows its
holder's kind, and refuses an item it did not write with a typed error."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hyperpod_ha.errors import InputRejected
from hyperpod_ha.lease import (
    Lease,
    LeaseItemRejected,
    lease_id_for_drill,
    lease_id_for_restore,
    lease_id_for_rollout,
    lease_id_for_trigger,
)
from hyperpod_ha.request_fields import MAX_TEXT_CHARS
from hyperpod_ha.trigger import Trigger

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "lease_items"
DRILL_ARN = "arn:aws:states:us-east-1:123456789012:execution:hyperpod-ha-drill:drill-1"
TAKEN_AT = 1_780_000_000


def recorded(name: str) -> dict[str, Any]:
    item: dict[str, Any] = json.loads((RECORDED / f"{name}.json").read_text())
    return item


RUN = Lease(
    lease_id="9ad3db36cd521f266ad8",
    trigger="sns:m-1",
    execution_name="ml-cluster-9ad3db36cd521f266ad8",
    taken_at=TAKEN_AT,
    expires_at=TAKEN_AT + 3600,
)


def test_an_item_a_deployed_table_holds_reads_as_its_lease() -> None:
    assert Lease.from_item(recorded("run_taken")) == RUN
    joined = Lease.from_item(recorded("run_joined"))
    assert (joined.kind, joined.joined_count, joined.joined) == ("run", 2, {"sns:m-2", "sns:m-3"})
    drill = Lease.from_item(recorded("drill_taken"))
    assert (drill.kind, drill.execution_arn, drill.execution_name) == ("drill", DRILL_ARN, "drill-1")
    assert drill.trigger == f"drill:{drill.lease_id}"


@pytest.mark.parametrize("name", ["run_taken", "run_joined", "drill_taken", "run_waiting_for_maintenance"])
def test_a_recorded_item_is_written_back_attribute_by_attribute(name: str) -> None:
    item = recorded(name)
    written = Lease.from_item(item).to_item()
    # The key is the state table's: everything else is the lease's, of the same names and types.
    assert unordered({"pk": item["pk"], **written}) == unordered(item)


def unordered(item: dict[str, Any]) -> dict[str, Any]:
    """A string set's members come in no order (DynamoDB's nor Python's)."""
    return {name: {"SS": set(value["SS"])} if "SS" in value else value for name, value in item.items()}


def test_a_run_and_a_drill_are_taken_as_the_code_before_took_them() -> None:
    trigger = Trigger("sns", "m-1")
    lease_id = lease_id_for_trigger(trigger)
    assert Lease.for_run(lease_id, trigger.key, RUN.execution_name, TAKEN_AT, 3600) == RUN
    drill = Lease.for_execution("drill", lease_id_for_drill(DRILL_ARN), DRILL_ARN, TAKEN_AT, 3600)
    assert drill == Lease.from_item(recorded("drill_taken"))


def test_a_run_waiting_for_maintenance_says_so_on_its_lease() -> None:
    waiting = Lease.from_item(recorded("run_waiting_for_maintenance"))
    assert waiting.maintenance.startswith("maintenance in progress: cluster SystemUpdating")
    assert waiting.expires_at == TAKEN_AT + 9500
    assert RUN.maintenance == ""
    assert "maintenance" not in RUN.to_item()  # only the workflow writes it
    with pytest.raises(LeaseItemRejected, match="maintenance is not a string"):
        Lease.from_item({**recorded("run_taken"), "maintenance": {"N": "1"}})
    with pytest.raises(LeaseItemRejected, match="maintenance is longer than"):
        Lease("a", "sns:m-1", "c-a", 10, 60, maintenance="x" * (MAX_TEXT_CHARS + 1))


def test_a_lease_round_trips_through_its_item() -> None:
    joined = Lease(
        "a", "eventbridge:e-1", "c-a", 10, 20, joined_count=150, joined=frozenset({"sns:1", "sns:2"})
    )
    for lease in (RUN, joined, Lease.for_execution("drill", "d", DRILL_ARN, 10, 60)):
        assert Lease.from_item(lease.to_item()) == lease


def test_ids_follow_from_the_trigger_or_the_drill_execution() -> None:
    # The ids of the code before: a lease taken before an update is found, joined and released after it.
    assert lease_id_for_trigger(Trigger("sns", "m-1")) == "9ad3db36cd521f266ad8"
    assert lease_id_for_trigger(Trigger("sns", "m-1", {"other": "summary"})) == "9ad3db36cd521f266ad8"
    assert lease_id_for_drill(DRILL_ARN) == "1f37430156b9f936ad0a"
    assert lease_id_for_trigger(Trigger("operator", "req-1")) == lease_id_for_trigger(
        Trigger("operator", "req-1")
    )
    # An operator's request without an id is a new run each time.
    fresh = {lease_id_for_trigger(Trigger("operator", "")) for _ in range(3)}
    assert len(fresh) == 3
    assert all(re.fullmatch(r"[0-9a-f]{20}", lease_id) for lease_id in fresh)


def test_a_lease_expires_once_its_second_is_past() -> None:
    assert not RUN.expired(RUN.expires_at)
    assert not RUN.expired(RUN.expires_at + 0.9)
    assert RUN.expired(RUN.expires_at + 1)


def test_the_holder_kind_is_a_run_unless_the_item_says_drill() -> None:
    item = recorded("run_taken")
    assert Lease.from_item(item).kind == "run"
    assert Lease.from_item({**item, "kind": {"S": "run"}}).kind == "run"
    assert "kind" not in RUN.to_item()  # a run's item never had one
    with pytest.raises(LeaseItemRejected, match="not a run, a drill, a restore or a roll-out"):
        Lease.from_item({**item, "kind": {"S": "verification"}})
    drill = recorded("drill_taken")
    del drill["execution_arn"]
    with pytest.raises(LeaseItemRejected, match="names no execution_arn"):
        Lease.from_item(drill)


@pytest.mark.parametrize(
    ("build", "reason"),
    [
        (
            lambda: Lease.for_execution("drill", "d", "arn:aws:states:r:1:execution:drills:", 10, 60),
            "execution_name is empty",
        ),
        (lambda: Lease.for_run("", "sns:m-1", "c-x", 10, 60), "lease_id is empty"),
        (lambda: Lease("a", "sns:m-1", "c-a", 10, 60, kind="drill"), "names no execution_arn"),
        (lambda: Lease("a", "x" * (MAX_TEXT_CHARS + 1), "c-a", 10, 60), "trigger is longer than"),
        (lambda: Lease("a", "sns:m-1", "c-a", 10, 60, joined=frozenset({""})), "joined holds an empty key"),
    ],
)
def test_a_lease_that_could_not_be_read_back_is_never_built(build: Callable[[], Lease], reason: str) -> None:
    with pytest.raises(LeaseItemRejected, match=reason):
        build()


def _without(name: str) -> dict[str, Any]:
    item = recorded("run_joined")
    del item[name]
    return item


@pytest.mark.parametrize(
    ("item", "reason"),
    [
        (_without("lease_id"), "lease_id is not a string"),
        (_without("trigger"), "trigger is not a string"),
        (_without("execution_name"), "execution_name is not a string"),
        (_without("taken_at"), "taken_at is not a whole number"),
        (_without("expires_at"), "expires_at is not a whole number"),
        ({**recorded("run_taken"), "lease_id": {"S": ""}}, "lease_id is empty"),
        ({**recorded("run_taken"), "lease_id": {"N": "7"}}, "lease_id is not a string"),
        ({**recorded("run_taken"), "trigger": {"S": "x" * (MAX_TEXT_CHARS + 1)}}, "longer than"),
        ({**recorded("run_taken"), "expires_at": {"S": "1780003600"}}, "expires_at is not a whole number"),
        ({**recorded("run_taken"), "expires_at": {"N": "soon"}}, "expires_at is not a whole number"),
        ({**recorded("run_taken"), "taken_at": {"N": "1.5"}}, "taken_at is not a whole number"),
        ({**recorded("run_taken"), "joined_count": {"BOOL": True}}, "joined_count is not a whole number"),
        (
            {**recorded("run_taken"), "joined": {"L": [{"S": "sns:m-2"}]}},
            "joined is not a set of trigger keys",
        ),
        ({**recorded("run_taken"), "joined": {"NS": ["2"]}}, "joined is not a set of trigger keys"),
        ({**recorded("run_taken"), "taken_at": {"Q": "1"}}, "taken_at is not a DynamoDB value"),
        ({**recorded("run_taken"), "taken_at": {}}, "taken_at is not a DynamoDB value"),
        ({**recorded("run_taken"), "taken_at": "1780000000"}, "taken_at is not a DynamoDB value"),
    ],
)
def test_an_item_this_code_did_not_write_is_rejected_with_its_reason(
    item: dict[str, Any], reason: str
) -> None:
    with pytest.raises(LeaseItemRejected, match=reason) as raised:
        Lease.from_item(item)
    assert isinstance(raised.value, InputRejected)
    assert "soon" not in raised.value.reason  # the reason names the attribute, not its value


def test_a_restore_holds_the_lease_as_a_drill_does_under_its_own_kind() -> None:
    arn = "arn:aws:states:us-east-1:123456789012:execution:hyperpod-ha-restore:restore-1"
    lease = Lease.for_execution("restore", lease_id_for_restore(arn), arn, TAKEN_AT, 3600)
    assert (lease.kind, lease.execution_name, lease.trigger) == (
        "restore",
        "restore-1",
        f"restore:{lease.lease_id}",
    )
    assert lease.to_item()["kind"] == {"S": "restore"}
    assert Lease.from_item(lease.to_item()) == lease
    # one id per execution, never a drill's for the same ARN
    assert lease_id_for_restore(arn) == lease_id_for_restore(arn) != lease_id_for_drill(arn)
    item = lease.to_item()
    del item["execution_arn"]
    with pytest.raises(LeaseItemRejected, match="restore's lease names no execution_arn"):
        Lease.from_item(item)


def test_a_rollout_holds_the_lease_for_its_invocation_under_its_own_kind() -> None:
    function = "arn:aws:lambda:us-east-1:123456789012:function:hyperpod-ha-RotateDbSecretFunction"
    lease = Lease.for_rollout(lease_id_for_rollout("token-1"), function, "req-1", TAKEN_AT, TAKEN_AT + 960)
    assert (lease.kind, lease.execution_arn, lease.execution_name) == ("rollout", function, "req-1")
    assert lease.trigger == f"rollout:{lease.lease_id}"
    assert lease.to_item()["kind"] == {"S": "rollout"}
    assert Lease.from_item(lease.to_item()) == lease
    # one id per roll-out (a rotation's token, or an invocation's request id), never another kind's
    assert lease_id_for_rollout("token-1") == lease.lease_id != lease_id_for_restore("token-1")
