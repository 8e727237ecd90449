"""The watchdog's record of since when each controller is unreachable through SSM, on moto's
DynamoDB: a node reached again or no longer Running is forgotten, a concurrent tick's newer time
is kept, a record no tick wrote for STALE_SECONDS is not believed by the restore and is started
again by the watchdog, and a reboot starts that node's wait again."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from hyperpod_ha import state_table
from hyperpod_ha.controllers.models import ReportStatus
from hyperpod_ha.watchdog.unreachable_nodes import UnreachableNodes
from tests.unit.verdict.cases.verdict_probes import Probe, Unreachable

NOW = 1_800_000_000
CLUSTER = "ml-cluster"
CTL2 = Unreachable("ctl2").report()


@pytest.fixture
def ddb() -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName="state",
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield client


def believed(ddb: Any, now: float) -> dict[str, int]:
    return state_table.unreachable_since(ddb, "state", CLUSTER, now)


def test_the_first_time_holds_and_a_node_no_longer_running_is_forgotten(ddb: Any) -> None:
    nodes = UnreachableNodes(CLUSTER, ddb, "state")
    assert nodes.note([Probe().report(), CTL2], NOW) == {CTL2.instance_id: NOW}
    assert nodes.note([Probe().report(), CTL2], NOW + 60) == {CTL2.instance_id: NOW}
    stopped = dataclasses.replace(CTL2, status=ReportStatus.NOT_RUNNING)
    assert nodes.note([Probe().report(), stopped], NOW + 120) == {}
    assert believed(ddb, NOW + 120) == {}


def test_forgetting_keeps_a_newer_time_a_concurrent_tick_wrote(ddb: Any) -> None:
    state_table.mark_unreachable(ddb, "state", CLUSTER, CTL2.instance_id, NOW + 300, NOW + 9000)
    state_table.forget_unreachable(ddb, "state", CLUSTER, CTL2.instance_id, NOW)  # an older one
    assert believed(ddb, NOW + 300) == {CTL2.instance_id: NOW + 300}


def test_a_stale_record_is_not_believed_and_the_watchdog_starts_the_wait_again(ddb: Any) -> None:
    nodes = UnreachableNodes(CLUSTER, ddb, "state")
    nodes.note([CTL2], NOW)
    later = NOW + state_table.UNREACHABLE_STALE_SECONDS + 1  # no tick since: the watchdog was off
    assert believed(ddb, later) == {}
    assert nodes.note([CTL2], later) == {CTL2.instance_id: later}  # not the old time
    assert believed(ddb, later) == {CTL2.instance_id: later}


def test_a_reboot_starts_the_wait_again_only_for_a_recorded_node(ddb: Any) -> None:
    UnreachableNodes(CLUSTER, ddb, "state").note([CTL2], NOW)
    state_table.restart_unreachable(ddb, "state", CLUSTER, CTL2.instance_id, NOW + 900)
    state_table.restart_unreachable(ddb, "state", CLUSTER, "i-0notrecorded00000", NOW + 900)
    assert believed(ddb, NOW + 900) == {CTL2.instance_id: NOW + 900}


def test_a_record_that_cannot_be_kept_never_stops_the_ticks_run() -> None:
    from botocore.exceptions import ClientError

    from tests.unit.watchdog.test_restore_start import TICK, Reads, watchdog

    class Failing:
        def note(self, reports: Any, now: float) -> dict[str, int]:
            raise ClientError({"Error": {"Code": "InternalServerError", "Message": "boom"}}, "UpdateItem")

    from tests.unit.restore.test_planner import PRIMARY, STANDBY_DEAD

    dog, runs = watchdog((PRIMARY, STANDBY_DEAD), Reads(), unreachable=Failing())  # type: ignore[arg-type]
    result = dog.tick(TICK)
    assert (result.outcome, result.restore, result.unreachable) == ("started", True, {})
    assert len(runs.started) == 1
