"""The failover drill end to end: the real drill state machine on moto's interpreter, the real
handlers, the drill's documents run on simulated controllers; and the CLI (drill start,
status) against that embedded stack, found as a deployed stack would be."""

from __future__ import annotations

import dataclasses
import io
import json
import time
from typing import Any

import boto3
import pytest

from hyperpod_ha import state_table
from hyperpod_ha_cli import drill as drill_cli
from hyperpod_ha_cli import following
from hyperpod_ha_cli import status as status_cli
from hyperpod_ha_cli.drill import wait_for_report
from hyperpod_ha_cli.execution_events import after
from hyperpod_ha_cli.main import main
from hyperpod_ha_dev.simulation.drill import DRILL_SCENARIOS, DrillSimulatedCluster, run_drill_scenario
from hyperpod_ha_dev.simulation.engine import _current, simulated_run
from tests.conftest import ROOT

pytestmark = pytest.mark.slow
CONTRACT = ("outcome", "takeover_seconds", "verified_seconds", "jobs_survived", "test_job", "hand_back")


class Results:
    """What the CLI prints as its result (``--json``): kept apart from logs, one text per call."""

    def __init__(self) -> None:
        self.printed: list[io.StringIO] = []

    def stream(self) -> io.StringIO:
        self.printed.append(io.StringIO())
        return self.printed[-1]

    def last_json(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.printed[-1].getvalue())
        return loaded


@pytest.fixture(autouse=True)
def results(monkeypatch: pytest.MonkeyPatch) -> Results:
    monkeypatch.setattr(following, "POLL_SECONDS", 0.2)
    monkeypatch.chdir(ROOT)
    kept = Results()
    monkeypatch.setattr(drill_cli, "result_stream", kept.stream)
    monkeypatch.setattr(status_cli, "result_stream", kept.stream)
    return kept


def test_a_drill_with_hand_back_measures_the_takeover_and_the_hand_back() -> None:
    result = run_drill_scenario(DRILL_SCENARIOS["drill"], ROOT)
    report = result.report
    assert result.passed, result.to_json()
    assert set(CONTRACT) <= set(report)
    assert (report["outcome"], report["from"], report["to"], report["verdict"]) == (
        "completed",
        "ctl1",
        "ctl2",
        "HEALTHY",
    )
    # The simulated backup is in control 2 s after the takeover; the first check is a second later.
    assert report["takeover_seconds"] >= 2.0
    assert report["verified_seconds"] >= report["takeover_seconds"]
    assert report["jobs_survived"] is True
    assert report["jobs"]["before"] == ["4"]
    assert (report["test_job"]["state"], report["test_job"]["ran"]) == ("COMPLETED", True)
    assert report["hand_back"]["verified"] is True
    assert report["hand_back"]["verified_seconds"] >= 2.0
    assert report["lease_released"] is True
    # What the last check (after the hand-back) left: ctl2 a ready standby again.
    assert (report["redundancy"], report["standbys"]) == ("full", ["ctl2"])
    assert [(o["title"], o["status"]) for o in result.ops_items] == [
        ("HyperPod cluster ml-cluster: failover drill completed", "Resolved")
    ]
    controller_events = [e.detail for e in result.timeline if e.what.strip() == "controller"]
    assert controller_events == ["takeover 1 ctl2", "start ctl1"]


def test_a_hand_back_that_leaves_slurmdbd_without_a_controller_registers_it_again() -> None:
    result = run_drill_scenario(DRILL_SCENARIOS["drill-registration-lost"], ROOT)
    assert result.passed, result.to_json()
    hand_back = result.report["hand_back"]
    assert (hand_back["verdict"], hand_back["verified"]) == ("HEALTHY", True)
    [attempt] = hand_back["registrations"]
    assert (attempt["registered_before"], attempt["reconfigured"], attempt["registered"]) == (
        None,
        True,
        "10.214.0.11",
    )
    assert result.report["takeover_registrations"] == []
    measured = [e.detail for e in result.timeline if e.what.strip() == "measured"]
    assert measured[-2:] == [
        f"hand-back: DEGRADED, active {after(hand_back['takeover_seconds'])}, verified not reached",
        f"hand-back: HEALTHY, active {after(hand_back['takeover_seconds'])}, "
        f"verified {after(hand_back['verified_seconds'])}",
    ]
    controller_events = [e.detail for e in result.timeline if e.what.strip() == "controller"]
    assert controller_events == ["takeover 1 ctl2", "start ctl1", "reconfigure ctl1"]


def test_a_drill_on_a_degraded_cluster_is_refused_and_changes_nothing() -> None:
    result = run_drill_scenario(DRILL_SCENARIOS["drill-refused"], ROOT)
    assert result.passed
    assert result.report["outcome"] == "refused"
    assert result.report["reasons"][0].startswith("the cluster is not HEALTHY now (DEGRADED)")
    assert result.report["takeover_seconds"] is None
    names = [e.what for e in result.timeline]
    assert "Take over on the backup" not in names
    assert "Record the running jobs" not in names
    assert not any(e.what.strip() == "controller" for e in result.timeline)


def test_a_drill_whose_standby_is_dead_is_refused_before_any_takeover() -> None:
    # Issue 35, finding 10 (seen on the lab): ctl2's slurmctld killed, ctl1 serves. The check is
    # HEALTHY with no ready standby; the drill used to send its takeover to the dead standby.
    result = run_drill_scenario(DRILL_SCENARIOS["drill-no-standby"], ROOT)
    assert result.passed, result.to_json()
    report = result.report
    assert report["reasons"] == [
        "the target ctl2 is not a ready standby (slurmctld not running): a takeover to it would fail "
        "(redundancy none); restore it first"
    ]
    assert (report["verdict"], report["redundancy"], report["standbys"]) == ("HEALTHY", "none", [])
    assert (report["takeover_seconds"], report["verified"], report["incident"]) == (None, None, None)
    names = [e.what for e in result.timeline]
    assert "Plan the drill" in names
    assert "Record the running jobs" not in names
    assert "Take over on the backup" not in names
    assert not any(e.what.strip() == "controller" for e in result.timeline)  # no command on a node


def drill_start(*extra: str) -> int:
    return main(["drill", "start", "--stack-name", "hyperpod-ha", *extra])


def status(*extra: str) -> int:
    return main(["status", "--stack-name", "hyperpod-ha", *extra])


def test_drill_start_json_then_status(results: Results) -> None:
    with simulated_run(DRILL_SCENARIOS["drill"].base, ROOT, DrillSimulatedCluster):
        code = drill_start("--cluster", "ml-cluster", "--hand-back", "--json")
        report = results.last_json()
        assert isinstance(_current.cluster, DrillSimulatedCluster)
        assert status("--cluster", "ml-cluster", "--json") == 0
        seen = results.last_json()
        assert status("--cluster", "ml-cluster") == 0
        text = results.printed[-1].getvalue()
    assert code == 0
    assert report["outcome"] == "completed"
    assert set(CONTRACT) <= set(report)
    assert report["hand_back"]["verified"] is True
    assert seen["last_drill"]["outcome"] == "completed"
    assert seen["last_drill"]["takeover_seconds"] == report["takeover_seconds"]
    assert seen["last_verdict"]["verdict"] == "HEALTHY"
    assert seen["in_progress"] is None
    assert seen["open_incidents"] == []
    assert "last drill: completed" in text


def test_a_refused_drill_exits_3_and_status_shows_the_run_in_progress_and_incidents(
    results: Results,
) -> None:
    # The verification run stays in its settle wait: it holds the lease for the whole test.
    held = dataclasses.replace(DRILL_SCENARIOS["drill"].base, parameters={"SettleSeconds": 600})
    with simulated_run(held, ROOT, DrillSimulatedCluster) as run:
        # A verification run holds the cluster, and an incident is open.
        run.stack.invoke(
            "IncidentFunction",
            {
                "action": "open",
                "cluster": "ml-cluster",
                "verdict": "DOWN",
                "reasons": ["no controller"],
                "execution_id": "arn:aws:states:us-east-1:123456789012:execution:x:y",
            },
        )
        run.notify("Slurm Controller is OFF (10.214.0.11, Primary Node)")
        code = drill_start("--cluster", "ml-cluster", "--json")
        report = results.last_json()
        # An incident is open: status says the cluster is not verified (exit 1) and why.
        assert status("--cluster", "ml-cluster", "--json") == 1
        seen = results.last_json()
        (running,) = run.stack.executions()
        run.stack.stop_running_executions()
    assert code == 1  # refused: the answer is no (the report says which no)
    assert report["outcome"] == "refused"
    assert seen["check"]["why"].endswith("open") or seen["check"]["why"].startswith("the last verdict")
    assert report["reasons"][0].startswith("a run holds the cluster now")
    assert seen["in_progress"]["kind"] == "verification"
    assert seen["in_progress"]["execution_arn"] == running["executionArn"]
    assert seen["in_progress"]["execution_link"].startswith(
        "https://us-east-1.console.aws.amazon.com/states/"
    )
    (incident,) = seen["open_incidents"]
    assert incident["link"].endswith(f"/systems-manager/opsitems/{incident['ops_item_id']}?region=us-east-1")
    assert seen["last_verdict"]["verdict"] == "DOWN"
    assert seen["last_verdict"]["reasons"] == ["no controller"]


def test_bad_input_exits_2_and_a_dry_run_changes_nothing(
    results: Results, capsys: pytest.CaptureFixture[str]
) -> None:
    with simulated_run(DRILL_SCENARIOS["drill"].base, ROOT, DrillSimulatedCluster) as run:
        assert drill_start("--cluster", "other-cluster") == 2
        assert "watches cluster 'ml-cluster', not 'other-cluster'" in capsys.readouterr().err
        assert status("--cluster", "other-cluster") == 2
        assert drill_start("--cluster", "ml-cluster", "--to", "ctl2;reboot") == 2
        assert drill_start("--cluster", "ml-cluster", "--slurm", "22.05") == 2
        assert "--slurm and --controllers go with --lab" in capsys.readouterr().err
        assert status("--cluster", "other-cluster", "--lab") == 2
        dry_run = drill_start("--cluster", "ml-cluster", "--dry-run", "--follow")
        followed = results.printed[-1].getvalue()
        drills = boto3.client("stepfunctions").list_executions(
            stateMachineArn=str(run.stack.outputs["FailoverDrillStateMachineArn"])
        )["executions"]
        simulated = _current.cluster
        assert isinstance(simulated, DrillSimulatedCluster)
        assert simulated.events == []  # no takeover, no start
        ops_items = boto3.client("ssm").describe_ops_items()["OpsItemSummaries"]
    assert dry_run == 0
    assert "Plan the drill" in followed
    assert "dry run: checked and planned only, no takeover" in followed
    assert "takeover: not done" in followed
    assert "Take over on the backup" not in followed
    assert len(drills) == 1  # the dry run; nothing before it started a drill
    assert ops_items == []  # its report and message are its record: no OpsItem, no "incident:"
    assert "incident:" not in followed
    assert "drill record:" not in followed


def test_a_report_that_cannot_be_written_still_frees_the_cluster() -> None:
    scenario = DRILL_SCENARIOS["drill-refused"]
    with simulated_run(scenario.base, ROOT, DrillSimulatedCluster) as run:
        boto3.client("sns").delete_topic(TopicArn=str(run.stack.outputs["NotificationTopicArn"]))
        sfn = boto3.client("stepfunctions")
        execution = sfn.start_execution(
            stateMachineArn=str(run.stack.outputs["FailoverDrillStateMachineArn"]),
            input=json.dumps({"cluster": "ml-cluster", "poll_seconds": 1}),
        )["executionArn"]
        ended = wait_for_report(execution, None, sleep=lambda _: time.sleep(0.2))
        lease = state_table.read_lease(boto3.client("dynamodb"), run.stack.ref("StateTable"), "ml-cluster")
    assert ended[0] == "FAILED"
    assert ended[2] == "DrillReportError"
    assert lease is None
