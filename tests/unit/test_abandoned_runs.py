from __future__ import annotations

import json
from typing import Any

import pytest

from hyperpod_ha.runs.abandoned import AbandonedRunRejected, needs_release_check, parse_abandoned_run
from tests.conftest import EVENTS


def sample(**detail: Any) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((EVENTS / "eventbridge_execution_aborted.json").read_text())
    event["detail"].update(detail)
    return event


@pytest.mark.parametrize("status", ["ABORTED", "TIMED_OUT", "FAILED"])
def test_abandoned_runs_name_their_cluster_and_lease(status: str) -> None:
    run = parse_abandoned_run(sample(status=status))
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
    ],
)
def test_anything_else_is_rejected(detail: dict[str, Any], reason: str) -> None:
    with pytest.raises(AbandonedRunRejected, match=reason):
        parse_abandoned_run(sample(**detail))
