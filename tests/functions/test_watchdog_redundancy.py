"""The redundancy-lost incident on the embedded stack: the watchdog's ticks on a cluster that
failed over (FAILED_OVER, verified, no standby left) open it after RedundancyGraceMinutes through
IncidentFunction, once per cluster, and the first tick that sees a ready standby resolves it; a
loss shorter than the grace opens nothing. The record is the state table's ``redundancy#``."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import boto3
import pytest

from hyperpod_ha import state_table
from hyperpod_ha.silences import Silences
from hyperpod_ha.status_records import StatusRecords
from hyperpod_ha_dev.simulation.engine import EmbeddedRun, simulated_run
from hyperpod_ha_dev.simulation.scenarios import (
    BACK_TO_STANDBY,
    KILLED_PRIMARY,
    RESTARTED_PRIMARY,
    SCENARIOS,
    TOOK_OVER,
    Scenario,
)
from tests.conftest import ROOT

pytestmark = pytest.mark.slow


def failed_over_then_back(ticks_lost: int, grace_minutes: int) -> Scenario:
    """ctl1 killed and ctl2 serving for ``ticks_lost`` ticks, then ctl1 back and ctl2 standby."""
    base = SCENARIOS["failover"]
    return replace(
        base,
        ctl1=(KILLED_PRIMARY,) * ticks_lost + (RESTARTED_PRIMARY,),
        ctl2=(TOOK_OVER,) * ticks_lost + (BACK_TO_STANDBY,),
        parameters={**base.parameters, "RedundancyGraceMinutes": grace_minutes},
    )


def ops_items() -> list[dict[str, Any]]:
    ssm = boto3.client("ssm")
    found = ssm.describe_ops_items(
        OpsItemFilters=[{"Key": "Source", "Values": ["hyperpod-ha"], "Operator": "Equal"}]
    )["OpsItemSummaries"]
    return [ssm.get_ops_item(OpsItemId=item["OpsItemId"])["OpsItem"] for item in found]


def loss(run: EmbeddedRun) -> dict[str, Any] | None:
    cluster = run.stack.parameters["ClusterName"]
    return state_table.read_redundancy_loss(boto3.client("dynamodb"), run.stack.ref("StateTable"), cluster)


def ready_standbys(out: str) -> list[tuple[float, dict[str, Any]]]:
    """The ReadyStandbys data the function printed (EMF), with their dimensions."""
    found = []
    for line in out.splitlines():
        if '"ReadyStandbys"' in line and line.startswith("{"):
            record = json.loads(line)
            (directive,) = record["_aws"]["CloudWatchMetrics"]
            dimensions = {name: record[name] for name in directive["Dimensions"][0]}
            value = record["ReadyStandbys"]  # Powertools writes a list of values
            found.append((value[0] if isinstance(value, list) else value, dimensions))
    return found


def test_no_standby_past_the_grace_opens_one_incident_and_a_ready_standby_resolves_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with simulated_run(failed_over_then_back(2, 0), ROOT) as run:
        first = run.stack.tick()
        cluster = run.stack.parameters["ClusterName"]
        assert ready_standbys(capsys.readouterr().out) == [
            (0, {"service": "hyperpod-ha", "cluster": cluster})
        ]
        assert (first["outcome"], first["verdict"], first["redundancy"]) == (
            "verified",
            "FAILED_OVER",
            "none",
        )
        assert (first["standbys"], first["not_ready"]) == ([], {"ctl1": "slurmctld not running"})
        assert first["redundancy_step"] == "open"
        second = run.stack.tick()
        assert second["redundancy_step"] == "open"
        (item,) = ops_items()  # de-duplicated per cluster and kind
        assert item["Status"] == "Open"
        assert item["Severity"] == "3"
        assert item["OperationalData"]["hyperpod-ha:kind"]["Value"] == "redundancy-lost"
        assert "no standby Slurm controller is ready" in item["Title"]
        recorded = loss(run)
        assert recorded is not None
        assert recorded["opened"] is True

        back = run.stack.tick()
        assert (back["verdict"], back["redundancy"], back["standbys"]) == ("HEALTHY", "full", ["ctl2"])
        assert back["redundancy_step"] == "resolve"
        assert [value for value, _ in ready_standbys(capsys.readouterr().out)][-1] == 1
        (item,) = ops_items()
        assert item["Status"] == "Resolved"
        assert loss(run) is None
        assert run.stack.executions() == []  # verified all along: no verification run


def test_a_loss_shorter_than_the_grace_pages_nobody() -> None:
    with simulated_run(failed_over_then_back(2, 10), ROOT) as run:
        assert run.stack.tick()["redundancy_step"] == "start"
        assert run.stack.tick()["redundancy_step"] == "wait"
        assert loss(run) is not None
        assert run.stack.tick()["redundancy_step"] == "forget"
        assert ops_items() == []
        assert loss(run) is None


def test_the_incident_that_opens_after_the_restores_says_that_restoring_stopped() -> None:
    # Restores follow runs at once; with a grace the incident opens after them, so it carries
    # what the last one did (the restore's own note found nothing open then).
    stopped = "restoring stopped: 2 restore actions on this cluster this hour already (RestoreMaxPerHour=2)"
    with simulated_run(failed_over_then_back(2, 0), ROOT) as run:
        cluster = str(run.stack.parameters["ClusterName"])
        records = StatusRecords(boto3.client("dynamodb"), run.stack.ref("StateTable"))
        records.put(cluster, "restore", {"mode": "all", "verdict": "FAILED_OVER", "stopped": stopped})
        assert run.stack.tick()["redundancy_step"] == "open"
        (item,) = ops_items()
        [said] = [line for line in item["Description"].splitlines() if stopped in line]
        assert said.startswith("- the last restore, ")
        assert said.endswith(f" s ago: {stopped}")


def test_in_a_silence_no_standby_opens_nothing_and_the_first_tick_after_it_does() -> None:
    bob = "arn:aws:iam::123456789012:user/bob"
    with simulated_run(failed_over_then_back(3, 0), ROOT) as run:
        silences = Silences(boto3.client("dynamodb"), run.stack.ref("StateTable"))
        silences.start("ml-cluster", 3600, "replacing the standby", bob)
        for _ in range(2):
            tick = run.stack.tick()
            assert (tick["verdict"], tick["redundancy"], tick["redundancy_step"]) == (
                "FAILED_OVER",
                "none",
                "open",
            )
        assert ops_items() == []
        silences.end("ml-cluster", bob)
        assert run.stack.tick()["redundancy_step"] == "open"
        (item,) = ops_items()
        assert item["OperationalData"]["hyperpod-ha:kind"]["Value"] == "redundancy-lost"
