"""Every handler, given arbitrary JSON: a documented reject or a result, and nothing started.

One property per entry point (``functions/*/app.py`` ``lambda_handler``), on the embedded
stack (moto): whatever JSON arrives, the handler returns or raises one of its documented
rejects (a typed ``ValueError`` subclass), and no verification run, lease, snapshot, command
or incident comes of it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hyperpod_ha.controllers.errors import ClusterRequestInvalid, ControllerInputError
from hyperpod_ha.incidents import InvalidIncidentRequest
from hyperpod_ha.notices.aws_events import NoticeRejected
from hyperpod_ha.rotation.errors import RotationRequestInvalid
from hyperpod_ha.runs.abandoned import AbandonedRunRejected
from hyperpod_ha.snapshots.errors import InvalidSnapshotRequest
from hyperpod_ha.verdict import ConvergenceInputError, VerdictInputError
from hyperpod_ha_dev.embedded.functions import FunctionError
from tests.conftest import HELD_RUNS, Embedded, _embedded

# The rejects each handler documents; anything else escaping is a bug. A handler not listed
# rejects by returning (the ingestion handlers keep the input in the dead-letter queue).
REJECTS: dict[str, tuple[type[Exception], ...]] = {
    "AbandonedRunFunction": (AbandonedRunRejected,),
    "ControllerStatusFunction": (),
    "HyperPodEventFunction": (),
    "DiscoverControllersFunction": (ClusterRequestInvalid,),
    "EvaluateVerdictFunction": (VerdictInputError, ConvergenceInputError),
    "HealthCheckFunction": (ControllerInputError,),
    "IncidentFunction": (InvalidIncidentRequest,),
    "SnapshotStateFunction": (InvalidSnapshotRequest, ClusterRequestInvalid),
    "RotateDbSecretFunction": (RotationRequestInvalid,),
    "NoticeFunction": (NoticeRejected,),
}

# Keys the handlers look at, so the generated objects reach past the first check.
KEYS = st.sampled_from(
    [
        "action",
        "cluster",
        "reports",
        "attempt",
        "max_attempts",
        "Records",
        "Sns",
        "Subject",
        "Message",
        "MessageId",
        "source",
        "detail-type",
        "detail",
        "id",
        "status",
        "input",
        "instance_id",
        "group",
        "target",
        "Step",
        "SecretId",
        "ClientRequestToken",
        "controllers",
        "execution_id",
        "verdict",
        "backup_id",
        "executionArn",
        "EventSource",
    ]
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
    | st.sampled_from(
        ["open", "resolve", "start", "describe", "aws.states", "aws.sagemaker", "ABORTED", "aws.cloudwatch"]
    )
)
JSON = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(KEYS | st.text(max_size=10), children, max_size=6)
    ),
    max_leaves=20,
)
EVENTS = st.dictionaries(KEYS, JSON, max_size=6) | JSON


@pytest.fixture(scope="module")
def stack() -> Iterator[Embedded]:
    yield from _embedded(HELD_RUNS)


def started(embedded: Embedded) -> dict[str, int]:
    """What a run, a snapshot, a command or an incident would have left behind."""
    state_table = embedded.stack.ref("StateTable")
    return {
        "executions": len(embedded.executions()),
        "state_items": boto3.client("dynamodb").scan(TableName=state_table, Select="COUNT")["Count"],
        "backups": len(boto3.client("fsx").describe_backups()["Backups"]),
        "commands": len(boto3.client("ssm").list_commands()["Commands"]),
    }


@pytest.mark.parametrize("logical_id", sorted(REJECTS))
def test_arbitrary_json_is_a_documented_reject_and_starts_nothing(stack: Embedded, logical_id: str) -> None:
    before = started(stack)
    outcomes: dict[str, int] = {}

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(event=EVENTS)
    def handle(event: Any) -> None:
        try:
            result = stack.stack.invoke(logical_id, event)
        except FunctionError as error:
            cause = error.__cause__
            assert isinstance(cause, REJECTS[logical_id]), f"{type(cause).__name__}: {cause} for {event!r}"
            outcomes[type(cause).__name__] = outcomes.get(type(cause).__name__, 0) + 1
            return
        json.dumps(result)
        outcomes["returned"] = outcomes.get("returned", 0) + 1

    handle()
    assert started(stack) == before
    assert sum(outcomes.values()) > 0
