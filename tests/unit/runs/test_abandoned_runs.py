from __future__ import annotations

import json
from typing import Any

import pytest

from hyperpod_ha.runs.abandoned import AbandonedRunRejected, needs_release_check, parse_abandoned_run
from tests.conftest import EVENTS

VERIFY = "arn:aws:states:us-east-1:123456789012:stateMachine:hyperpod-ha-FailoverVerificationStateMachine"
DRILL = "arn:aws:states:us-east-1:123456789012:stateMachine:hyperpod-ha-FailoverDrillStateMachine"
OURS = (VERIFY, DRILL)


def sample(**detail: Any) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((EVENTS / "eventbridge_execution_aborted.json").read_text())
    event["detail"].update(detail)
    return event


def parse(event: dict[str, Any]) -> Any:
    return parse_abandoned_run(event, OURS, "ml-cluster")


@pytest.mark.parametrize("status", ["ABORTED", "TIMED_OUT", "FAILED"])
def test_abandoned_runs_name_their_cluster_and_lease(status: str) -> None:
    run = parse(sample(status=status))
    assert (run.status, run.cluster, run.lease_id) == (status, "ml-cluster", "e3195a828cd66531e17c")
    # A FAILED run may have cleaned up after itself: handled only while its lease is held.
    assert needs_release_check(run) is (status == "FAILED")


@pytest.mark.parametrize(
    ("detail", "reason"),
    [
        ({"status": "SUCCEEDED"}, "not ABORTED"),
        ({"status": "RUNNING"}, "not ABORTED"),
        ({"executionArn": ""}, "executionArn"),
        ({"input": "not json"}, "not JSON"),
        ({"input": json.dumps({"reason": "x"})}, "no cluster"),
        # Issue 22: only this stack's own executions, of this cluster, act.
        ({"stateMachineArn": VERIFY.replace("123456789012", "210987654321")}, "not one of this stack's"),
        ({"stateMachineArn": VERIFY + "-x"}, "not one of this stack's"),
        ({"stateMachineArn": None}, "not one of this stack's"),
        (
            {
                "executionArn": "arn:aws:states:us-east-1:210987654321:execution:other:"
                "ml-cluster-e3195a828cd66531e17c"
            },
            "not an execution of that state machine",
        ),
        ({"stateMachineArn": DRILL}, "not an execution of that state machine"),  # a verification's ARN
        (
            {"executionArn": VERIFY.replace(":stateMachine:", ":execution:") + ":" + "x" * 2560},
            "not an execution",
        ),
        (
            {"input": json.dumps({"cluster": "other-cluster", "lease_id": "e3195a828cd66531e17c"})},
            "another cluster",
        ),
        ({"input": json.dumps({"cluster": "ml-cluster", "lease_id": "x" * 2560})}, "lease_id is not an id"),
        ({"input": json.dumps({"cluster": "ml-cluster", "lease_id": 7})}, "lease_id is not a string"),
        ({"input": " " * (10 * 256 * 1024)}, "not JSON text of a run"),
    ],
)
def test_anything_else_is_rejected(detail: dict[str, Any], reason: str) -> None:
    with pytest.raises(AbandonedRunRejected, match=reason):
        parse(sample(**detail))


def test_a_long_reason_is_cut_to_a_bounded_excerpt() -> None:
    from hyperpod_ha.request_fields import CUT_MARK, MAX_TEXT_CHARS

    given = {
        "cluster": "ml-cluster",
        "lease_id": "e3195a828cd66531e17c",
        "reason": "r" * (10 * MAX_TEXT_CHARS),
    }
    run = parse(sample(input=json.dumps(given)))
    assert len(run.reason) == MAX_TEXT_CHARS
    assert run.reason.endswith(CUT_MARK)
