"""The reboot of a controller's node end to end: ctl2's node hangs (SSM cannot reach it, its
instance Running, ctl1's ping sees its slurmctld down). A watchdog tick records since when; once
that is RestoreUnreachableMinutes old, the real restore state machine on moto's interpreter with
RestoreRedundancy=all asks BatchRebootClusterNodes (moto lacks it: the embedded cluster's
stand-in, ``cluster_records.node_reboots``, records the request) for that one node, waits, finds
it reached with slurmctld down, starts it with the restore document and checks it came back as a
standby. With ``standbys`` nothing is rebooted: the notice names the exact command."""

from __future__ import annotations

import time
from dataclasses import replace

import boto3
import pytest

from hyperpod_ha import state_table
from hyperpod_ha_dev.simulation.engine import EmbeddedRun
from hyperpod_ha_dev.simulation.restore import RestoreResult, UnreachableUntilRebooted, run_restore
from hyperpod_ha_dev.simulation.scenarios import CTL2_INSTANCE, SCENARIOS
from tests.conftest import ROOT

pytestmark = pytest.mark.slow

MINUTES = 15
COMMAND = f"aws sagemaker batch-reboot-cluster-nodes --cluster-name ml-cluster --node-ids {CTL2_INSTANCE}"


def tick_then_age(run: EmbeddedRun) -> None:
    """One watchdog tick records ctl2 unreachable from now; then that is made MINUTES old (the
    minutes are at least 5: no test waits them)."""
    tick = run.stack.tick()
    assert tick["verdict"] == "HEALTHY"  # ctl1 serves: verified, no verification run
    assert list(tick["unreachable"]) == [CTL2_INSTANCE]
    dynamodb, table = boto3.client("dynamodb"), run.stack.ref("StateTable")
    recorded = state_table.unreachable_since(dynamodb, table, "ml-cluster", time.time())
    assert recorded == tick["unreachable"]
    since = recorded[CTL2_INSTANCE]
    state_table.forget_unreachable(dynamodb, table, "ml-cluster", CTL2_INSTANCE, since)
    aged = int(time.time()) - MINUTES * 60 - 1
    assert (
        state_table.mark_unreachable(dynamodb, table, "ml-cluster", CTL2_INSTANCE, aged, aged + 3600) == aged
    )


def restore(mode: str) -> RestoreResult:
    base = SCENARIOS["healthy"]
    scenario = replace(
        base,
        parameters={
            **base.parameters,
            "RestoreRedundancy": mode,
            "RestoreUnreachableMinutes": MINUTES,
            "ClusterId": "abcdef123456",
        },
    )
    return run_restore(
        ROOT,
        {"mode": mode, "reboot_wait_seconds": 0},
        UnreachableUntilRebooted,
        scenario,  # type: ignore[arg-type]
        before=tick_then_age,
    )


def test_all_reboots_the_unreachable_standby_once_starts_slurmctld_and_it_stands_by() -> None:
    result = restore("all")
    assert result.status == "SUCCEEDED", result.output
    assert result.rebooted == [CTL2_INSTANCE]  # one BatchRebootClusterNodes, that one node
    [action] = result.output["plan"]["value"]["actions"]
    assert (action["kind"], action["controller"], action["command"]) == ("reboot-node", "ctl2", COMMAND)
    states = result.states
    assert states.index("Reboot the node") < states.index("Wait for the node to reboot")
    assert "Start slurmctld on the controller" in states  # reached, slurmctld down: started once
    assert result.started == ["start ctl2"]
    [outcome] = result.output["results"]
    assert (outcome["kind"], outcome["restored"]) == ("reboot-node", True)
    assert outcome["what"] == "ctl2: slurmctld runs, logged the standby role and answers ping"
    assert result.output["record"]["value"]["verify"] is True  # a verification follows
    [notice] = result.notices
    assert "ctl2: reboot-node: restored" in notice


def test_standbys_reboots_nothing_and_the_notice_names_the_command() -> None:
    result = restore("standbys")
    assert result.status == "SUCCEEDED", result.output
    assert result.rebooted == []
    assert result.started == []
    plan = result.output["plan"]["value"]
    assert [(a["kind"], a["controller"]) for a in plan["not_taken"]] == [("reboot-node", "ctl2")]
    assert "Reboot the node" not in result.states
    [notice] = result.notices
    assert f"ctl2: {COMMAND}" in notice
    assert "RestoreRedundancy=standbys; all would" in notice
