"""Open and resolve requests: rejected with a reason, and redacted before the OpsItem is made."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hyperpod_ha.incidents import (
    InvalidIncidentRequest,
    OpenRequest,
    ResolveRequest,
)
from hyperpod_ha.incidents.messages import verified
from hyperpod_ha.incidents.ops_item import ops_item_request
from tests.unit.incidents.cases.incident_world import (
    open_event,
)


@settings(max_examples=60, deadline=None)
@given(
    # A marker prefix so that the secret cannot be ordinary text of the OpsItem by chance.
    secret=st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#%*+-./").map(
        lambda tail: "zQ9x" + tail
    ),
    key=st.sampled_from(["password", "StoragePass", "secret_string", "SessionToken", "db_pass", "api_key"]),
    form=st.sampled_from(["{k}={v}", "{k}: {v}", '"{k}": "{v}"', "{k} = '{v}'"]),
)
def test_no_secret_reaches_the_ops_item(secret: str, key: str, form: str) -> None:
    line = form.format(k=key, v=secret)
    event = open_event(
        evidence={
            "report": {key: secret, "stdout": f"before\n{line}\nafter"},
            "list": [{"host": "h", key: secret}],
        },
        reasons=[f"slurmdbd failed: {line}"],
        error={"Error": "RotationFailed", "Cause": json.dumps({"errorMessage": line})},
    )
    request = ops_item_request(OpenRequest.from_event(event))
    assert secret not in json.dumps(request)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"cluster": ""}, "cluster is required"),
        ({"cluster": "bad name!"}, "cluster is not a HyperPod cluster name"),
        ({"execution_id": None}, "execution_id is required"),
        ({"verdict": "", "kind": None}, "verdict or kind is required"),
        ({"kind": "two words"}, "kind must be"),
        ({"reasons": "one reason"}, "reasons must be a list"),
        ({"evidence": "text"}, "evidence must be an object"),
        ({"error": "boom"}, "error must be an object"),
    ],
)
def test_bad_open_requests_are_rejected_with_a_reason(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidIncidentRequest, match=message):
        OpenRequest.from_event(open_event(**changes))


def test_resolve_request_kinds() -> None:
    default = ResolveRequest.from_event({"cluster": "c1", "verdict": "HEALTHY", "execution_id": "e"})
    assert default.covers("DOWN")
    assert default.covers(None)
    assert not default.covers("rollout-failed")
    assert not default.covers("accounting-database-revert-failed")
    rollout = ResolveRequest.from_event(
        {"cluster": "c1", "verdict": "HEALTHY", "execution_id": "e", "kinds": ["rollout-failed"]}
    )
    assert rollout.covers("rollout-failed")
    assert not rollout.covers("DOWN")
    with pytest.raises(InvalidIncidentRequest):
        ResolveRequest.from_event(
            {"cluster": "c1", "verdict": "HEALTHY", "execution_id": "e", "kinds": "DOWN"}
        )


def test_a_resolve_request_names_no_ready_standby_by_its_code_not_its_words() -> None:
    lost = "no standby is ready: one more failure stops the cluster (ctl2 is active)"
    event = {
        "cluster": "c1",
        "verdict": "FAILED_OVER",
        "execution_id": "e",
        "reasons": ["ctl2 took over", lost],
    }
    coded = ResolveRequest.from_event({**event, "reason_codes": ["backup-took-over", "no-ready-standby"]})
    assert coded.reason_codes == ("backup-took-over", "no-ready-standby")
    assert ResolveRequest.from_event(coded.to_event()) == coded
    said = verified(coded, None, "us-east-1", 0.0)
    assert said.subject.endswith("verified FAILED_OVER, no standby ready (sev 4)")
    # The same words without the code are only a reason among the others.
    assert (
        "no standby ready" not in verified(ResolveRequest.from_event(event), None, "us-east-1", 0.0).subject
    )


@pytest.mark.parametrize(
    ("codes", "message"),
    [
        ("no-ready-standby", "reason_codes must be a list"),
        (["no ready standby", "x"], "reason_codes must be a list"),
        (["no-ready-standby"], "one code per reason"),
    ],
)
def test_bad_reason_codes_are_rejected(codes: object, message: str) -> None:
    event = {
        "cluster": "c1",
        "verdict": "HEALTHY",
        "execution_id": "e",
        "reasons": ["a", "b"],
        "reason_codes": codes,
    }
    with pytest.raises(InvalidIncidentRequest, match=message):
        ResolveRequest.from_event(event)
