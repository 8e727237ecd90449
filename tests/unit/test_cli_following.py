"""Following an execution from the CLI: a history longer than one page of GetExecutionHistory is
read whole, each event handed over once (Stubber: the requests botocore's paginator makes)."""

from __future__ import annotations

import datetime as dt
import io
import json
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from hyperpod_ha_cli import following
from hyperpod_ha_cli.drill import wait_for_report
from hyperpod_ha_cli.following import ExecutionHistory, StateView, follow_execution
from hyperpod_ha_cli.restore import wait_for_outcome

ARN = "arn:aws:states:us-east-1:123456789012:execution:restore:ml-cluster-restore-0123456789ab"
MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:restore"
PAGE = 1000  # what one page of GetExecutionHistory holds at most
START = dt.datetime(2026, 12, 4, 10, 0, tzinfo=dt.UTC)


def event(number: int, state: str | None = None, output: dict[str, Any] | None = None) -> dict[str, Any]:
    """History event ``number``: a state entered (``state``), or exited with ``output``, else a pass."""
    at = {"id": number, "timestamp": START + dt.timedelta(seconds=number), "previousEventId": number - 1}
    if output is not None:
        details = {"name": state or "?", "output": json.dumps(output)}
        return {**at, "type": "TaskStateExited", "stateExitedEventDetails": details}
    if state is not None:
        return {**at, "type": "TaskStateEntered", "stateEnteredEventDetails": {"name": state}}
    return {**at, "type": "PassStateExited", "stateExitedEventDetails": {"name": "Note it"}}


def expect_history(stub: Stubber, events: list[dict[str, Any]], pages: int) -> None:
    """The newest ``pages`` pages of ``events`` (oldest first), as Step Functions gives them with
    ``reverseOrder``: newest first, at most ``PAGE`` a page, a token while older ones are left."""
    newest_first = events[::-1]
    for index in range(pages):
        page = newest_first[index * PAGE : (index + 1) * PAGE]
        more = (index + 1) * PAGE < len(newest_first)
        asked: dict[str, Any] = {"executionArn": ARN, "reverseOrder": True}
        if index:
            asked["nextToken"] = f"page-{index}"
        stub.add_response(
            "get_execution_history",
            {"events": page, **({"nextToken": f"page-{index + 1}"} if more else {})},
            asked,
        )


def expect_described(stub: Stubber, status: str, output: dict[str, Any] | None = None) -> None:
    described = {"executionArn": ARN, "stateMachineArn": MACHINE, "status": status, "startDate": START}
    if output is not None:
        described["output"] = json.dumps(output)
    stub.add_response("describe_execution", described, {"executionArn": ARN})


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Any:
    sfn = boto3.client("stepfunctions", region_name="us-east-1")
    monkeypatch.setattr(following.boto3, "client", lambda service: sfn)
    with Stubber(sfn) as stubbed:
        yield stubbed
        stubbed.assert_no_pending_responses()


def test_a_history_of_three_pages_is_read_whole_then_only_what_came_since(stub: Stubber) -> None:
    events = [event(n) for n in range(1, 2501)]
    history = ExecutionHistory(boto3.client("stepfunctions"), ARN)
    expect_history(stub, events, pages=3)
    assert [e["id"] for e in history.read_new()] == list(range(1, 2501))
    grown = [*events, event(2501), event(2502), event(2503)]
    expect_history(stub, grown, pages=1)  # its newest page already holds events read: no more asked
    assert [e["id"] for e in history.read_new()] == [2501, 2502, 2503]
    expect_history(stub, grown, pages=1)
    assert history.read_new() == []
    assert [e["id"] for e in history.events] == list(range(1, 2504))


def test_following_hands_every_event_over_once_in_order_and_returns_the_whole_history(stub: Stubber) -> None:
    first = [event(n) for n in range(1, 1201)]
    whole = [*first, *(event(n) for n in range(1201, 2301))]
    expect_described(stub, "RUNNING")
    expect_history(stub, first, pages=2)
    expect_described(stub, "SUCCEEDED", {"done": True})
    expect_history(stub, whole, pages=2)  # 1100 new: the second page reaches those read
    shown: list[int] = []
    pauses: list[float] = []
    described, history = follow_execution(ARN, lambda e: shown.append(e["id"]), lambda: None, pauses.append)
    assert described["status"] == "SUCCEEDED"
    assert shown == [e["id"] for e in history] == list(range(1, 2301))
    assert pauses == [following.POLL_SECONDS]


def test_without_a_view_the_history_is_not_read(stub: Stubber) -> None:
    expect_described(stub, "FAILED")
    status, output, _ = wait_for_outcome(ARN, None, sleep=lambda _: None)
    assert (status, output) == ("FAILED", None)


def test_the_restore_shows_the_states_past_the_first_page_and_leaves_the_probes_out(stub: Stubber) -> None:
    events = [event(1, "Plan the restore")]
    events += [event(n, "Run the probe on the controller") for n in range(2, 1500)]
    events += [event(1500, "Tell what was done")]
    expect_described(stub, "SUCCEEDED", {"results": []})
    expect_history(stub, events, pages=2)
    out = io.StringIO()
    status, output, _ = wait_for_outcome(ARN, StateView(out, live=False), sleep=lambda _: None)
    assert (status, output) == ("SUCCEEDED", {"results": []})
    assert out.getvalue() == "10:00:01  Plan the restore\n10:25:00  Tell what was done\n"


def test_the_drill_shows_each_phase_measured_even_on_an_older_page(stub: Stubber) -> None:
    phase = {"name": "takeover", "verdict": "FAILED_OVER", "active_seconds": 7.3, "verified_seconds": 12}
    events = [event(1, "Measure the recovery", {"phase": phase})]
    events += [event(n) for n in range(2, 1200)]
    report = {"outcome": "completed"}
    expect_described(stub, "SUCCEEDED", report)
    expect_history(stub, events, pages=2)
    out = io.StringIO()
    ended = wait_for_report(ARN, StateView(out, live=False), sleep=lambda _: None)
    assert ended == ("SUCCEEDED", report, None)
    assert out.getvalue() == "10:00:01    takeover: FAILED_OVER  active after 7.3 s, verified after 12 s\n"
