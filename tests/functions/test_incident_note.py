"""IncidentFunction's ``note`` on moto's SSM with the embedded stack's OpsCenter double: a
restore's lines go on the cluster's open incidents of the kinds named, once per execution,
bounded, redacted; nothing else is touched."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from hyperpod_ha.incidents import IncidentSettings, InvalidIncidentRequest, OpenRequest
from hyperpod_ha.incidents.errors import NoteRefused
from hyperpod_ha.incidents.function import IncidentFunction
from hyperpod_ha.incidents.keys import KIND_REDUNDANCY_LOST, RESTORE_ACTIONS_KEY
from hyperpod_ha.incidents.limits import OPERATIONAL_DATA_VALUE_LIMIT
from hyperpod_ha.incidents.ops_item import ops_item_request
from hyperpod_ha.incidents.tracking import Incidents
from hyperpod_ha.own_executions import OwnExecutions
from hyperpod_ha_dev.embedded import opscenter
from hyperpod_ha_dev.embedded.patching import applied
from tests.conftest import EVENTS
from tests.fakes.step_executions import EveryExecutionRuns, KnownExecutions

REGION = "us-west-2"
RESTORES = "arn:aws:states:us-west-2:123456789012:stateMachine:hyperpod-ha-redundancy-restore"
RESTORE = "arn:aws:states:us-west-2:123456789012:execution:hyperpod-ha-redundancy-restore:restore-1"
NOW = 1_796_119_200.0  # 2026-12-01 10:00:00 UTC


@pytest.fixture
def ssm(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    with mock_aws(), applied(opscenter.patches()):
        yield boto3.client("ssm", region_name=REGION)


def function(ssm: Any, restores: OwnExecutions | None = None) -> IncidentFunction:
    """IncidentFunction with the stack's restore state machine (``restores``; by default each
    of its executions asked about runs: the tests of what a note does)."""
    incidents = Incidents(ssm, boto3.client("sns"), IncidentSettings(region=REGION), clock=lambda: NOW)
    restores = restores or OwnExecutions(RESTORES, EveryExecutionRuns(RESTORES), "restore")
    return IncidentFunction(incidents, None, None, "ml-cluster", restores)


def open_item(ssm: Any, kind: str = KIND_REDUNDANCY_LOST, cluster: str = "ml-cluster", **changes: Any) -> str:
    """An OpsItem as IncidentFunction's open makes it (``changes``: what to make different)."""
    request = OpenRequest.from_event(
        {
            "cluster": cluster,
            "kind": kind,
            "execution_id": f"arn:aws:states:us-west-2:123456789012:execution:watchdog:{kind}",
            "reasons": ["no standby has been ready for 10 minutes"],
        }
    )
    return str(ssm.create_ops_item(**{**ops_item_request(request), **changes})["OpsItemId"])


def note(**changes: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "action": "note",
        "cluster": "ml-cluster",
        "kinds": [KIND_REDUNDANCY_LOST, "HEALTHY"],
        "execution_id": RESTORE,
        "lines": [
            "restore RestoreRedundancy=standbys: verdict HEALTHY, active ctl1",
            "ctl2: start-slurmctld: restored"
            " (ctl2: slurmctld runs, logged the standby role and answers ping)",
        ],
    }
    event.update(changes)
    return event


def notes(ssm: Any, ops_item_id: str) -> list[dict[str, Any]] | None:
    data = ssm.get_ops_item(OpsItemId=ops_item_id)["OpsItem"].get("OperationalData", {})
    value = data.get(RESTORE_ACTIONS_KEY, {}).get("Value")
    return None if value is None else list(json.loads(value))


def test_the_open_redundancy_lost_incident_gets_the_restores_lines_once(ssm: Any) -> None:
    lost = open_item(ssm)
    assert function(ssm).handle(note(), None) == {"noted": [lost]}
    assert notes(ssm, lost) == [
        {"at": "2026-12-01T10:00:00.000Z", "execution": RESTORE, "lines": note()["lines"]}
    ]
    # A retried call (the same execution) adds nothing; the next restore adds its own entry.
    assert function(ssm).handle(note(lines=["again"]), None) == {"noted": [lost]}
    assert [entry["execution"] for entry in notes(ssm, lost) or []] == [RESTORE]
    function(ssm).handle(note(execution_id=RESTORE + "-2", lines=["restoring stopped: ..."]), None)
    assert [entry["lines"] for entry in notes(ssm, lost) or []] == [
        note()["lines"],
        ["restoring stopped: ..."],
    ]


def test_the_verdicts_incident_gets_them_too_but_no_other_kind(ssm: Any) -> None:
    degraded = open_item(ssm, kind="DEGRADED")
    other_kind = open_item(ssm, kind="verification-error")
    result = function(ssm).handle(note(kinds=[KIND_REDUNDANCY_LOST, "DEGRADED"]), None)
    assert result == {"noted": [degraded]}
    assert notes(ssm, other_kind) is None


def test_the_sample_note_goes_on_the_open_incident(ssm: Any) -> None:
    sample = json.loads((EVENTS / "incident_note.json").read_text())
    lost = open_item(ssm)
    machine = sample["execution_id"].rsplit(":", 1)[0].replace(":execution:", ":stateMachine:")
    restores = OwnExecutions(machine, EveryExecutionRuns(machine), "restore")
    assert function(ssm, restores).handle(sample, None) == {"noted": [lost]}
    [entry] = notes(ssm, lost) or []
    assert entry["lines"] == sample["lines"]


def test_nothing_open_notes_nothing(ssm: Any) -> None:
    assert function(ssm).handle(note(), None) == {"noted": []}


def test_resolved_others_and_not_ours_are_left_untouched(ssm: Any) -> None:
    resolved = open_item(ssm)
    ssm.update_ops_item(OpsItemId=resolved, Status="Resolved")
    other_cluster = open_item(ssm, cluster="other-cluster")
    not_ours = open_item(ssm, Source="someone-else")
    assert function(ssm).handle(note(), None) == {"noted": []}
    assert [notes(ssm, item) for item in (resolved, other_cluster, not_ours)] == [None, None, None]


def test_another_clusters_note_is_refused(ssm: Any) -> None:
    open_item(ssm, cluster="other-cluster")
    with pytest.raises(
        InvalidIncidentRequest, match="this stack watches cluster ml-cluster, not other-cluster"
    ):
        function(ssm).handle(note(cluster="other-cluster"), None)


def test_many_restores_keep_the_value_within_opscenters_limit_newest_last(ssm: Any) -> None:
    lost = open_item(ssm)
    lines = ["z" * 500] * 8  # about 4 KB an entry
    for number in range(12):
        function(ssm).handle(note(execution_id=f"{RESTORE}-{number}", lines=lines), None)
    value = ssm.get_ops_item(OpsItemId=lost)["OpsItem"]["OperationalData"][RESTORE_ACTIONS_KEY]["Value"]
    assert len(value.encode()) <= OPERATIONAL_DATA_VALUE_LIMIT
    kept = [entry["execution"] for entry in json.loads(value)]
    assert 1 < len(kept) < 12
    assert kept == [f"{RESTORE}-{number}" for number in range(12 - len(kept), 12)]


def test_a_secret_in_a_line_is_redacted_on_the_ops_item(ssm: Any) -> None:
    lost = open_item(ssm)
    lines = ["ctl2: slurmdbd: StoragePass=hunter2 refused", "ctl2 token: s3cr3t"]
    # Issue 35, finding 3: the forms the redaction missed.
    lines += [
        "ctl2: SLURM_JWT=jwt4u2c",
        "ctl2: Authorization: Bearer b34rer",
        "ctl2: SET PASSWORD FOR 'slurm'@'%' = PASSWORD('s3tpw')",
        "ctl2: mysqladmin -u root password m4dmin",
        "ctl2: sshpass -p ssh9ass ssh ctl1",
    ]
    function(ssm).handle(note(lines=lines), None)
    value = ssm.get_ops_item(OpsItemId=lost)["OpsItem"]["OperationalData"][RESTORE_ACTIONS_KEY]["Value"]
    for secret in ("hunter2", "s3cr3t", "jwt4u2c", "b34rer", "s3tpw", "m4dmin", "ssh9ass"):
        assert secret not in value
    [entry] = json.loads(value)  # still the JSON list
    assert entry["lines"][0] == "ctl2: slurmdbd: StoragePass=[redacted] refused"


def test_an_unknown_action_names_note() -> None:
    incidents = Incidents(None, None, IncidentSettings(region=REGION))  # type: ignore[arg-type]
    with pytest.raises(InvalidIncidentRequest, match="action must be open, resolve or note"):
        IncidentFunction(incidents, None, None, "ml-cluster").handle({"action": "append"}, None)  # type: ignore[arg-type]


# --- issue 35, finding 2: a note only from a running restore of this stack --------------------


@pytest.mark.parametrize(
    ("known", "execution_id", "reason"),
    [
        ({}, RESTORE, "no restore execution of that name exists"),
        ({RESTORE: (RESTORES, "SUCCEEDED")}, RESTORE, "that restore execution is SUCCEEDED, not running"),
        (
            {},
            "arn:aws:states:us-west-2:123456789012:execution:hyperpod-ha-failover-drill:restore-1",
            "the request names no execution of this stack's restore state machine",
        ),
    ],
    ids=["no such execution", "an ended restore", "a drill's execution"],
)
def test_a_note_outside_a_running_restore_notes_nothing(
    ssm: Any, known: dict[str, tuple[str, str]], execution_id: str, reason: str
) -> None:
    lost = open_item(ssm)
    restores = OwnExecutions(RESTORES, KnownExecutions(known), "restore")
    with pytest.raises(NoteRefused, match=f"nothing is noted: {reason}"):
        function(ssm, restores).handle(note(execution_id=execution_id, lines=["forged"]), None)
    assert notes(ssm, lost) is None


def test_a_function_that_knows_no_restore_notes_nothing(ssm: Any) -> None:
    lost = open_item(ssm)
    incidents = Incidents(ssm, boto3.client("sns"), IncidentSettings(region=REGION), clock=lambda: NOW)
    with pytest.raises(NoteRefused, match="knows no restore state machine"):
        IncidentFunction(incidents, None, None, "ml-cluster").handle(note(), None)  # type: ignore[arg-type]
    assert notes(ssm, lost) is None


def test_a_note_from_the_running_restore_is_asked_of_step_functions_once(ssm: Any) -> None:
    lost = open_item(ssm)
    asked = KnownExecutions({RESTORE: (RESTORES, "RUNNING")})
    function(ssm, OwnExecutions(RESTORES, asked, "restore")).handle(note(), None)
    assert asked.asked == [RESTORE]
    assert [entry["execution"] for entry in notes(ssm, lost) or []] == [RESTORE]
