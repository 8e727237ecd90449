"""Opening: the OpsItem once, Incident Manager once, the "opened" message once, a "still open"
reminder at most once per interval (Stubber checks each request against the real API model, so
the shapes here are the ones AWS would receive; the reminders' times are in moto's DynamoDB)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
import pytest
from botocore.stub import ANY

from hyperpod_ha.incidents import (
    IncidentFailed,
    OpenRequest,
    OpenResult,
)
from hyperpod_ha.incidents.keys import incident_client_token
from hyperpod_ha.incidents.reminders import Reminders
from hyperpod_ha.silences import Silences
from tests.unit.incidents.cases.incident_world import (
    EXECUTION,
    INCIDENT,
    NOW,
    OPS_ITEM,
    OTHER_EXECUTION,
    PLAN,
    STATE_TABLE,
    World,
    marked,
    open_event,
    ops_item,
    ops_summary,
)


def test_open_creates_the_ops_item_and_notifies_once(world: World) -> None:
    request = OpenRequest.from_event(open_event())
    world.expect_create(request)
    world.expect_get(ops_item(execution=EXECUTION))
    world.expect_update(OPS_ITEM, marked(notified=EXECUTION))
    result = world.incidents().open(request)
    assert result.to_json() == {
        "ops_item_id": OPS_ITEM,
        "created": True,
        "incident_arn": None,
        "notified": True,
        "message": "opened",
        "links": {
            "execution": f"https://us-west-2.console.aws.amazon.com/states/home?region=us-west-2"
            f"#/v2/executions/details/{EXECUTION}",
            "ops_item": f"https://us-west-2.console.aws.amazon.com/systems-manager/opsitems/{OPS_ITEM}?region=us-west-2",
            "incident": None,
        },
    }
    [message] = world.messages()
    assert message["Subject"] == "[hyperpod-ha] ml-cluster: DOWN: no Slurm controller is active (sev 1)"
    assert "no controller answered scontrol ping" in message["Message"]
    assert message["MessageAttributes"]["event"]["Value"] == "opened"


def test_retried_open_has_no_second_effect(world: World) -> None:
    request = OpenRequest.from_event(open_event())
    # The first attempt did everything; its answer was lost. OpsCenter deduplicates quietly.
    world.expect_create(request)
    world.expect_get(ops_item(execution=EXECUTION, notified=EXECUTION, incident=INCIDENT))
    result = world.incidents(plan=PLAN).open(request)
    assert result.ops_item_id == OPS_ITEM
    assert result.created is True  # it is this execution's OpsItem: the same answer as the first time
    assert result.incident_arn == INCIDENT
    assert result.notified is True
    assert world.messages() == []  # no second message, no StartIncident, no update (Stubber: none queued)


def test_dedup_hit_by_exception_is_not_created_and_reminds_once_the_interval_passed(world: World) -> None:
    request = OpenRequest.from_event(open_event())
    world.expect_duplicate("oi-00000000aaaa")
    world.expect_get(
        ops_item("oi-00000000aaaa", opened_ago=3700, execution=OTHER_EXECUTION, notified=OTHER_EXECUTION),
        "oi-00000000aaaa",
    )
    world.expect_update("oi-00000000aaaa", marked(notified=EXECUTION))
    # A response plan is set, but the incident belongs to whoever opened the OpsItem: no StartIncident.
    result = world.incidents(plan=PLAN).open(request)
    assert (result.ops_item_id, result.created, result.incident_arn) == ("oi-00000000aaaa", False, None)
    assert result.message == "reminder"
    [message] = world.messages()
    assert message["Subject"] == (
        "[hyperpod-ha] ml-cluster: still open for 1 h 1 min: DOWN: no Slurm controller is active (sev 1)"
    )
    assert message["MessageAttributes"]["event"]["Value"] == "reminder"
    assert "open since 1 h 1 min ago (2026-12-01 08:58 UTC)" in message["Message"]


def test_dedup_hit_by_quiet_return_is_not_created(world: World) -> None:
    request = OpenRequest.from_event(open_event())
    world.expect_create(request, "oi-00000000bbbb")
    world.expect_get(
        ops_item(
            "oi-00000000bbbb",
            opened_ago=7200,
            execution=OTHER_EXECUTION,
            notified=OTHER_EXECUTION,
            incident=INCIDENT,
        ),
        "oi-00000000bbbb",
    )
    world.expect_update("oi-00000000bbbb", marked(notified=EXECUTION))
    result = world.incidents(plan=PLAN).open(request)
    assert (result.ops_item_id, result.created, result.incident_arn) == ("oi-00000000bbbb", False, INCIDENT)
    assert result.links.incident is not None
    assert len(world.messages()) == 1


def test_duplicate_without_an_id_finds_the_open_ops_item(world: World) -> None:
    request = OpenRequest.from_event(open_event())
    world.expect_duplicate(None)
    world.expect_describe(
        [
            ops_summary("oi-00000000cccc", cluster="ml-cluster", kind="SPLIT_BRAIN"),
            ops_summary("oi-00000000dddd", cluster="ml-cluster", kind="DOWN"),
        ],
        ["Open", "InProgress"],
    )
    world.expect_get(ops_item("oi-00000000dddd", execution=OTHER_EXECUTION), "oi-00000000dddd")
    world.expect_update("oi-00000000dddd", marked(notified=EXECUTION))
    # No CreatedTime and no reminder yet: the reminder is due.
    assert world.incidents().open(request).ops_item_id == "oi-00000000dddd"


def test_open_starts_one_incident_manager_incident_with_its_own_token(world: World) -> None:
    request = OpenRequest.from_event(open_event())
    world.expect_create(request)
    world.expect_get(ops_item(execution=EXECUTION))
    world.im_stub.add_response(
        "start_incident",
        {"incidentRecordArn": INCIDENT},
        {
            "responsePlanArn": PLAN,
            "clientToken": incident_client_token(EXECUTION, "DOWN"),
            "title": "HyperPod cluster ml-cluster: DOWN: no Slurm controller is active",
            "impact": 1,
            "triggerDetails": {
                "source": "hyperpod-ha",
                "timestamp": ANY,
                "rawData": ANY,
                "triggerArn": EXECUTION,
            },
            "relatedItems": ANY,
        },
    )
    world.expect_update(OPS_ITEM, {**marked(incident=INCIDENT), **marked(notified=EXECUTION)})
    result = world.incidents(plan=PLAN).open(request)
    assert result.incident_arn == INCIDENT
    assert (
        result.links.incident
        == "https://us-west-2.console.aws.amazon.com/systems-manager/incidents/home?region=us-west-2"
    )
    [message] = world.messages()
    assert INCIDENT in message["Message"]


def test_incident_manager_failure_is_reported_and_the_ops_item_stands(world: World) -> None:
    request = OpenRequest.from_event(open_event())
    world.expect_create(request)
    world.expect_get(ops_item(execution=EXECUTION))
    world.im_stub.add_client_error(
        "start_incident", service_error_code="AccessDeniedException", http_status_code=403
    )
    world.expect_update(OPS_ITEM, marked(notified=EXECUTION))
    result = world.incidents(plan=PLAN).open(request)
    assert result.incident_arn is None
    assert result.incident_error == "StartIncident failed: AccessDeniedException"
    assert result.to_json()["incident_error"] == "StartIncident failed: AccessDeniedException"
    assert len(world.messages()) == 1


def test_ops_center_refusal_is_a_typed_failure(world: World) -> None:
    world.ssm_stub.add_client_error("create_ops_item", service_error_code="OpsItemLimitExceededException")
    with pytest.raises(IncidentFailed, match="CreateOpsItem failed: OpsItemLimitExceededException"):
        world.incidents().open(OpenRequest.from_event(open_event()))
    assert world.messages() == []


def test_open_without_a_topic_reports_not_notified(world: World) -> None:
    request = OpenRequest.from_event(open_event())
    world.expect_create(request)
    world.expect_get(ops_item(execution=EXECUTION))
    result = world.incidents(topic=False).open(request)
    assert result.notified is False
    assert result.message is None


def _tick(world: World, minutes: int, *, reminded: bool) -> OpenResult:
    """A run ``minutes`` after the DOWN incident was opened (at NOW) finds it open again;
    ``reminded``: whether it is to send the reminder (Stubber then expects its marker)."""
    request = OpenRequest.from_event(open_event(execution_id=f"{EXECUTION}-{minutes}"))
    world.expect_duplicate(OPS_ITEM)
    world.expect_get(ops_item(opened_ago=0, execution=OTHER_EXECUTION, notified=OTHER_EXECUTION))
    if reminded:
        world.expect_update(OPS_ITEM, marked(notified=request.execution_id))
    return world.incidents(now=NOW + minutes * 60).open(request)


def test_runs_within_the_interval_send_no_reminder(world: World) -> None:
    # Three watchdog ticks 5, 10 and 15 minutes after the opening: no page (it was once per tick).
    for minutes in (5, 10, 15):
        result = _tick(world, minutes, reminded=False)
        assert (result.created, result.notified, result.message) == (False, False, None)
    assert world.messages() == []


def test_one_reminder_per_interval_however_many_runs(world: World) -> None:
    # A tick every 5 minutes for 2 h 10 min, reminders every 60 minutes: at 60 and 120 only.
    sent = [m for m in range(5, 135, 5) if _tick(world, m, reminded=m in (60, 120)).message == "reminder"]
    assert sent == [60, 120]
    subjects = [message["Subject"] for message in world.messages()]
    assert subjects == [
        "[hyperpod-ha] ml-cluster: still open for 1 h: DOWN: no Slurm controller is active (sev 1)",
        "[hyperpod-ha] ml-cluster: still open for 2 h: DOWN: no Slurm controller is active (sev 1)",
    ]


def test_no_reminder_when_turned_off(world: World) -> None:
    request = OpenRequest.from_event(open_event())
    world.expect_duplicate(OPS_ITEM)
    world.expect_get(ops_item(opened_ago=86_400, execution=OTHER_EXECUTION, notified=OTHER_EXECUTION))
    assert world.incidents(reminder_seconds=0).open(request).message is None
    assert world.messages() == []


def test_of_runs_at_once_one_claims_the_reminder(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    # DynamoDB checks a condition and writes the item as one step; moto's backend checks, then
    # writes, with no lock between: on a busy machine two threads both passed the check. The
    # lock gives moto DynamoDB's atomicity; the runs still race to it from their own threads.
    from moto.dynamodb.models import DynamoDBBackend

    atomic, moto_update = threading.Lock(), DynamoDBBackend.update_item

    def update_item(self: DynamoDBBackend, *args: Any, **kwargs: Any) -> Any:
        with atomic:
            return moto_update(self, *args, **kwargs)

    monkeypatch.setattr(DynamoDBBackend, "update_item", update_item)
    reminders = Reminders(boto3.client("dynamodb"), STATE_TABLE, 3600)
    start = threading.Barrier(8)

    def claim(_: int) -> bool:
        start.wait()
        return reminders.claim("ml-cluster", OPS_ITEM, NOW - 3600, NOW)

    with ThreadPoolExecutor(8) as pool:
        claimed = list(pool.map(claim, range(8)))
    assert claimed.count(True) == 1
    # The next interval: one more, and only one.
    assert reminders.claim("ml-cluster", OPS_ITEM, NOW - 3600, NOW + 3600)
    assert not reminders.claim("ml-cluster", OPS_ITEM, NOW - 3600, NOW + 3601)


def test_a_reminder_that_could_not_be_sent_is_sent_by_the_retry(world: World) -> None:
    request = OpenRequest.from_event(open_event())
    world.expect_duplicate(OPS_ITEM)
    world.expect_get(ops_item(opened_ago=7200, execution=OTHER_EXECUTION, notified=OTHER_EXECUTION))
    incidents = world.incidents()
    boto3.client("sns").delete_topic(TopicArn=world.topic)
    with pytest.raises(IncidentFailed, match="SNS Publish failed"):
        incidents.open(request)
    # The claim was released: the retried call (the topic back) reminds.
    boto3.client("sns").create_topic(Name="hyperpod-ha")
    world.expect_duplicate(OPS_ITEM)
    world.expect_get(ops_item(opened_ago=7200, execution=OTHER_EXECUTION, notified=OTHER_EXECUTION))
    world.expect_update(OPS_ITEM, marked(notified=EXECUTION))
    assert world.incidents().open(request).message == "reminder"


def _silence(world: World, seconds: int = 3600) -> None:
    silences = Silences(boto3.client("dynamodb"), STATE_TABLE, lambda: NOW - 60)
    silences.start("ml-cluster", seconds, "kernel upgrade", "arn:aws:iam::123456789012:user/bob")


def test_a_silenced_open_opens_nothing_and_tells_nobody(world: World) -> None:
    _silence(world)
    # No create, get or update queued: Stubber fails on any OpsCenter call.
    result = world.incidents(plan=PLAN).open(OpenRequest.from_event(open_event()))
    assert (result.ops_item_id, result.created, result.notified, result.message) == (None, False, False, None)
    answer = result.to_json()
    assert answer["silenced"]["reason"] == "kernel upgrade"
    assert answer["silenced"]["started_by"] == "arn:aws:iam::123456789012:user/bob"
    assert world.messages() == []


def test_an_open_after_the_silence_ended_opens_and_tells(world: World) -> None:
    _silence(world, seconds=60)  # ended at NOW
    request = OpenRequest.from_event(open_event())
    world.expect_create(request)
    world.expect_get(ops_item(execution=EXECUTION))
    world.expect_update(OPS_ITEM, marked(notified=EXECUTION))
    result = world.incidents().open(request)
    assert (result.created, result.message, result.silenced) == (True, "opened", None)
    assert [m["MessageAttributes"]["event"]["Value"] for m in world.messages()] == ["opened"]


def test_a_silence_that_cannot_be_read_does_not_silence(world: World) -> None:
    boto3.client("dynamodb").put_item(
        TableName=STATE_TABLE, Item={"pk": {"S": "silence#ml-cluster"}, "until": {"N": "1"}}
    )
    request = OpenRequest.from_event(open_event())
    world.expect_create(request)
    world.expect_get(ops_item(execution=EXECUTION))
    world.expect_update(OPS_ITEM, marked(notified=EXECUTION))
    assert world.incidents().open(request).message == "opened"
