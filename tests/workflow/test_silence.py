"""A verification run in the operator's silence, end to end (the real ASL on moto's interpreter):
the run checks and its verdict is recorded, but no OpsItem is opened and nothing is published;
after the silence ends, the next run pages."""

from __future__ import annotations

import boto3
import pytest

from hyperpod_ha.silences import Silences
from hyperpod_ha.status_records import StatusRecords
from hyperpod_ha_dev.simulation.engine import simulated_run
from hyperpod_ha_dev.simulation.scenarios import SCENARIOS
from tests.conftest import ROOT, published

pytestmark = pytest.mark.slow

BOB = "arn:aws:iam::123456789012:user/bob"


def test_a_cluster_found_down_in_a_silence_is_recorded_and_pages_nobody() -> None:
    scenario = SCENARIOS["both-down"]
    with simulated_run(scenario, ROOT) as run:
        table = run.stack.ref("StateTable")
        silences = Silences(boto3.client("dynamodb"), table)
        silences.start("ml-cluster", 3600, "kernel upgrade", BOB)
        run.notify(scenario.notification)
        result = run.finish(scenario)
        verdict = StatusRecords(boto3.client("dynamodb"), table).read("ml-cluster")["verdict"]
        topic = run.stack.outputs["NotificationTopicArn"]
        assert published(topic) == []

        # Ended: the same cluster, checked again, pages.
        silences.end("ml-cluster", BOB)
        run.notify(scenario.notification)
        again = run.finish(scenario)
        kinds = [message.attributes["event"] for message in published(topic)]
    assert result.verdict == "DOWN"
    assert result.incidents == []
    assert (verdict["verdict"], verdict["silenced"]["reason"]) == ("DOWN", "kernel upgrade")
    assert len(again.incidents) == 1
    assert "opened" in kinds
