"""Opening: the OpsItem once, Incident Manager once, the message once (Stubber checks each request
against the real API model, so the shapes here are the ones AWS would receive)."""

from __future__ import annotations

import pytest
from botocore.stub import ANY

from hyperpod_ha.incidents import (
    IncidentFailed,
    OpenRequest,
)
from hyperpod_ha.incidents.keys import incident_client_token
from tests.unit.incidents.cases.incident_world import (
    EXECUTION,
    INCIDENT,
    OPS_ITEM,
    OTHER_EXECUTION,
    PLAN,
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
        "links": {
            "execution": f"https://us-west-2.console.aws.amazon.com/states/home?region=us-west-2"
            f"#/v2/executions/details/{EXECUTION}",
            "ops_item": f"https://us-west-2.console.aws.amazon.com/systems-manager/opsitems/{OPS_ITEM}?region=us-west-2",
            "incident": None,
        },
    }
    [message] = world.messages()
    assert message["Subject"] == "hyperpod-ha ml-cluster: DOWN - incident opened (sev 1)"
    assert "no controller answered scontrol ping" in message["Message"]


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


def test_dedup_hit_by_exception_is_not_created_and_notifies_still_open(world: World) -> None:
    request = OpenRequest.from_event(open_event())
    world.expect_duplicate("oi-00000000aaaa")
    world.expect_get(
        ops_item("oi-00000000aaaa", execution=OTHER_EXECUTION, notified=OTHER_EXECUTION), "oi-00000000aaaa"
    )
    world.expect_update("oi-00000000aaaa", marked(notified=EXECUTION))
    # A response plan is set, but the incident belongs to whoever opened the OpsItem: no StartIncident.
    result = world.incidents(plan=PLAN).open(request)
    assert (result.ops_item_id, result.created, result.incident_arn) == ("oi-00000000aaaa", False, None)
    [message] = world.messages()
    assert "incident still open" in message["Subject"]


def test_dedup_hit_by_quiet_return_is_not_created(world: World) -> None:
    request = OpenRequest.from_event(open_event())
    world.expect_create(request, "oi-00000000bbbb")
    world.expect_get(
        ops_item("oi-00000000bbbb", execution=OTHER_EXECUTION, notified=OTHER_EXECUTION, incident=INCIDENT),
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
            "title": "HyperPod cluster ml-cluster: no Slurm controller is active (DOWN)",
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
