"""Resolving: our open OpsItems resolved, "recovered" said once, or "verified" when nothing was open."""

from __future__ import annotations

from typing import Any

import boto3
from botocore.stub import ANY

from hyperpod_ha.incidents import ResolveRequest
from hyperpod_ha.incidents.keys import RESOLUTION_KEY, RESOLVED_BY_KEY
from hyperpod_ha.silences import Silences
from tests.unit.incidents.cases.incident_world import (
    EXECUTION,
    NOW,
    STATE_TABLE,
    World,
    marked,
    ops_summary,
)


def _resolve(**changes: Any) -> ResolveRequest:
    event = {"cluster": "ml-cluster", "verdict": "HEALTHY", "execution_id": EXECUTION, **changes}
    return ResolveRequest.from_event(event)


def test_resolve_closes_our_open_items_and_says_recovered_once(world: World) -> None:
    world.expect_describe([], ["Resolved"], **{RESOLVED_BY_KEY: EXECUTION})
    world.expect_describe(
        [
            {**ops_summary("oi-000000000001", cluster="ml-cluster", kind="DOWN"), "Severity": "1"},
            ops_summary("oi-000000000002", cluster="ml-cluster", kind="rollout-failed"),
            ops_summary("oi-000000000003", source="someone-else", cluster="ml-cluster", kind="DOWN"),
            ops_summary("oi-000000000004", cluster="other-cluster", kind="DOWN"),
        ],
        ["Open", "InProgress"],
    )
    world.expect_update(
        "oi-000000000001",
        {
            RESOLVED_BY_KEY: {"Type": "SearchableString", "Value": EXECUTION},
            RESOLUTION_KEY: {"Type": "String", "Value": ANY},
        },
        Status="Resolved",
    )
    world.expect_update("oi-000000000001", marked(recovery_notified=EXECUTION))
    result = world.incidents().resolve(_resolve())
    assert result.to_json() == {"resolved": ["oi-000000000001"], "notified": True, "message": "recovered"}
    [message] = world.messages()
    # The resolution carries the severity of what it resolves: a pager that got DOWN gets this.
    assert message["Subject"] == "[hyperpod-ha] ml-cluster: recovered (HEALTHY): DOWN resolved (sev 1)"
    assert {name: value["Value"] for name, value in message["MessageAttributes"].items()} == {
        "cluster": "ml-cluster",
        "kind": "recovered",
        "severity": "1",
        "event": "resolved",
        "dedup_key": "hyperpod-ha:ml-cluster:DOWN",  # the resolved problem's, as its opening had
        "level": "critical",
        "verdict": "HEALTHY",
    }
    assert "  - oi-000000000001 DOWN (sev 1), open since an earlier run: https://" in message["Message"]


def test_retried_resolve_has_no_second_effect(world: World) -> None:
    done = ops_summary(
        "oi-000000000001",
        status="Resolved",
        cluster="ml-cluster",
        kind="DOWN",
        resolved_by=EXECUTION,
        recovery_notified=EXECUTION,
    )
    world.expect_describe([done], ["Resolved"], **{RESOLVED_BY_KEY: EXECUTION})
    world.expect_describe([], ["Open", "InProgress"])
    verified_calls: list[ResolveRequest] = []

    def announce(request: ResolveRequest) -> bool:
        verified_calls.append(request)
        return True

    result = world.incidents().resolve(_resolve(), announce)
    assert result.to_json() == {"resolved": ["oi-000000000001"], "notified": True, "message": "recovered"}
    assert world.messages() == []
    assert verified_calls == []


def test_resolve_retried_after_a_lost_message_sends_it(world: World) -> None:
    half_done = ops_summary(
        "oi-000000000001", status="Resolved", cluster="ml-cluster", kind="DOWN", resolved_by=EXECUTION
    )
    world.expect_describe([half_done], ["Resolved"], **{RESOLVED_BY_KEY: EXECUTION})
    world.expect_describe([], ["Open", "InProgress"])
    world.expect_update("oi-000000000001", marked(recovery_notified=EXECUTION))
    result = world.incidents().resolve(_resolve())
    assert result.message == "recovered"
    assert len(world.messages()) == 1


def test_resolve_with_nothing_open_says_verified(world: World) -> None:
    world.expect_describe([], ["Resolved"], **{RESOLVED_BY_KEY: EXECUTION})
    world.expect_describe([], ["Open", "InProgress"])
    result = world.incidents().resolve(_resolve(verdict="FAILED_OVER"))
    assert result.to_json() == {"resolved": [], "notified": True, "message": "verified"}
    [message] = world.messages()
    assert message["Subject"] == "[hyperpod-ha] ml-cluster: verified FAILED_OVER (sev 4)"
    assert message["MessageAttributes"]["event"]["Value"] == "notice"
    assert "a backup controller took over and serves" in message["Message"]


def test_resolve_of_a_rollout_failure_only_when_named(world: World) -> None:
    world.expect_describe([], ["Resolved"], **{RESOLVED_BY_KEY: EXECUTION})
    world.expect_describe(
        [
            ops_summary("oi-000000000001", cluster="ml-cluster", kind="DOWN"),
            ops_summary("oi-000000000002", cluster="ml-cluster", kind="rollout-failed"),
        ],
        ["Open", "InProgress"],
    )
    world.expect_update("oi-000000000002", ANY, Status="Resolved")
    world.expect_update("oi-000000000002", marked(recovery_notified=EXECUTION))
    result = world.incidents().resolve(_resolve(kinds=["rollout-failed"]))
    assert result.resolved == ("oi-000000000002",)


def _silence() -> None:
    silences = Silences(boto3.client("dynamodb"), STATE_TABLE, lambda: NOW - 60)
    silences.start("ml-cluster", 3600, "kernel upgrade", "arn:aws:iam::123456789012:user/bob")


def test_in_a_silence_an_incident_opened_before_it_is_still_resolved_and_said_recovered(world: World) -> None:
    _silence()
    world.expect_describe([], ["Resolved"], **{RESOLVED_BY_KEY: EXECUTION})
    world.expect_describe(
        [{**ops_summary("oi-000000000001", cluster="ml-cluster", kind="DOWN"), "Severity": "1"}],
        ["Open", "InProgress"],
    )
    world.expect_update(
        "oi-000000000001",
        {
            RESOLVED_BY_KEY: {"Type": "SearchableString", "Value": EXECUTION},
            RESOLUTION_KEY: {"Type": "String", "Value": ANY},
        },
        Status="Resolved",
    )
    world.expect_update("oi-000000000001", marked(recovery_notified=EXECUTION))
    assert world.incidents().resolve(_resolve()).message == "recovered"
    assert [m["MessageAttributes"]["event"]["Value"] for m in world.messages()] == ["resolved"]


def test_in_a_silence_nothing_open_sends_no_verified_notice(world: World) -> None:
    _silence()
    world.expect_describe([], ["Resolved"], **{RESOLVED_BY_KEY: EXECUTION})
    world.expect_describe([], ["Open", "InProgress"])
    result = world.incidents().resolve(_resolve())
    assert (result.resolved, result.notified) == ((), False)
    assert world.messages() == []
