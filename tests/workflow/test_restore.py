"""A restore of redundancy end to end: the real restore state machine on moto's interpreter,
the real handlers, the restore's document run on simulated controllers (ctl1 active, ctl2's
slurmctld killed)."""

from __future__ import annotations

import json
import time
from typing import Any

import boto3
import pytest

from hyperpod_ha import state_table
from hyperpod_ha.incidents.keys import KIND_KEY, RESTORE_ACTIONS_KEY
from hyperpod_ha.slurm.triggers import trigger_message
from hyperpod_ha_dev.simulation.engine import EmbeddedRun
from hyperpod_ha_dev.simulation.restore import (
    RestartsAndDies,
    RestoreResult,
    run_restore,
    run_verification_with_restore,
)
from tests.conftest import ROOT

pytestmark = pytest.mark.slow

RESTORE_MAX_PER_HOUR = 2  # the template's default

RUNBOOK = [
    "Check the request",
    "Fill in the defaults",
    "Check the settings",
    "Take the cluster's lease",
    "Is the cluster ours?",
    "Find the controllers",
    "Check every controller",
    "Plan the restore",
    "Is there a controller to restore?",
    "Restore each controller",
    "Which action?",
    "Start slurmctld on the controller",
    "Wait for slurmctld to start",
    "Check the restarted controller",
    "Did it come back as it should?",
    "Count the check",
    "Is it restored?",
    "The controller is restored",
    "Record the restore",
    "Anything for the incident?",
    "Note it on the incident",
    "Release the cluster",
    "Was a controller started?",
    "Start a verification",
    "Restore done",
]


def test_standbys_starts_the_killed_standby_checks_it_and_starts_a_verification() -> None:
    result = run_restore(ROOT, {"mode": "standbys"})
    assert result.status == "SUCCEEDED", result.output
    assert [state for state in result.states if not state.startswith("Run the probe")] == RUNBOOK
    assert result.started == ["start ctl2"]
    assert result.output["results"] == [
        {
            "controller": "ctl2",
            "kind": "start-slurmctld",
            "restored": True,
            "what": "ctl2: slurmctld runs, logged the standby role and answers ping",
            "command": result.output["plan"]["value"]["actions"][0]["command"],
        }
    ]
    assert result.output["record"]["value"]["verify"] is True
    # The verification it started, as any trigger starts one (it took the lease).
    assert [e["name"] for e in result.executions] == [
        result.output["verification"]["value"]["execution_arn"].rsplit(":", 1)[-1]
    ]


def test_off_starts_nothing_and_names_the_session_command() -> None:
    result = run_restore(ROOT, {"mode": "off"})
    assert result.status == "SUCCEEDED"
    assert result.started == []
    plan = result.output["plan"]["value"]
    assert plan["act"] is False
    assert plan["reasons"][0].startswith("RestoreRedundancy is off: would start slurmctld on ctl2")
    assert "aws ssm start-session --target" in plan["reasons"][0]
    assert "Start a verification" not in result.states
    assert result.executions == []


def test_a_slurmctld_that_dies_after_every_start_is_told_not_restored() -> None:
    result = run_restore(ROOT, {"mode": "standbys"}, RestartsAndDies)
    assert result.status == "SUCCEEDED"
    [outcome] = result.output["results"]
    assert (outcome["controller"], outcome["restored"]) == ("ctl2", False)
    assert "slurmctld not running yet" in outcome["what"]


def test_a_verification_with_standbys_restores_the_standby_and_the_next_run_is_healthy() -> None:
    found = run_verification_with_restore(ROOT, "standbys")
    first, after = found["FailoverVerificationStateMachineArn"]
    [restore] = found["RedundancyRestoreStateMachineArn"]
    # standby ctl2: slurmctld not running. The failover is fine (HEALTHY), no standby is left.
    assert (first["status"], first["error"]) == ("SUCCEEDED", None)
    assert "Restore redundancy?" in first["states"]
    assert "Start the restore" in first["states"]
    assert restore["status"] == "SUCCEEDED"
    assert "The controller is restored" in restore["states"]
    assert (after["status"], after["states"][-1]) == ("SUCCEEDED", "Failover verified")
    assert "Start the restore" not in after["states"]  # HEALTHY: nothing to restore


def test_slurms_trigger_for_a_dead_standby_starts_the_run_whose_restore_brings_it_back() -> None:
    # Issue 37: the active slurmctld's backup_slurmctld_failure, published by the triggers'
    # program, starts the run (no tick, no operator); RestoreRedundancy=standbys restores ctl2.
    message = trigger_message("backup_slurmctld_failure", "ctl1", "2026-12-06T17:00:00Z")
    found = run_verification_with_restore(ROOT, "standbys", slurm_trigger=message)
    first, after = found["FailoverVerificationStateMachineArn"]
    [restore] = found["RedundancyRestoreStateMachineArn"]
    trigger = first["input"]["trigger"]
    assert (trigger["source"], trigger["summary"]["event"], trigger["summary"]["host"]) == (
        "slurm-trigger",
        "backup_slurmctld_failure",
        "ctl1",
    )
    assert (first["status"], first["error"]) == ("SUCCEEDED", None)
    assert "Start the restore" in first["states"]
    assert "The controller is restored" in restore["states"]
    assert (after["status"], after["states"][-1]) == ("SUCCEEDED", "Failover verified")


def test_a_run_holding_the_lease_hands_it_to_the_restore_before_its_snapshot() -> None:
    # Issue 36: the restore no longer waits for the run's snapshot to free the cluster.
    found = run_verification_with_restore(ROOT, "standbys", lease_id="lease-of-the-first-run")
    first, after = found["FailoverVerificationStateMachineArn"]
    [restore] = found["RedundancyRestoreStateMachineArn"]
    states = first["states"]
    assert states.index("Start the restore") < states.index("Snapshot the Slurm state")
    assert states.index("Snapshot the Slurm state") < states.index("Release the cluster")
    lease = restore["output"]["lease"]["value"]
    assert (lease["taken"], lease["handed_from"]) == (True, "verify-first")
    assert "The controller is restored" in restore["states"]
    assert (after["status"], after["states"][-1]) == ("SUCCEEDED", "Failover verified")
    # The first run's release found the lease the restore's: it freed nothing of another's.
    assert (first["status"], first["error"]) == ("SUCCEEDED", None)


def test_a_verification_with_off_starts_no_restore() -> None:
    found = run_verification_with_restore(ROOT, "off")
    [first] = found["FailoverVerificationStateMachineArn"]
    assert (first["status"], first["error"]) == ("SUCCEEDED", None)  # HEALTHY, redundancy none
    assert "Restore redundancy?" in first["states"]
    assert "Start the restore" not in first["states"]
    assert found["RedundancyRestoreStateMachineArn"] == []


def test_restore_start_follow_then_status(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from hyperpod_ha_cli import following
    from hyperpod_ha_cli import restore as restore_cli
    from hyperpod_ha_cli import status as status_cli
    from hyperpod_ha_cli.main import main
    from hyperpod_ha_dev.simulation.engine import simulated_run
    from hyperpod_ha_dev.simulation.restore import RestoreSimulatedCluster
    from hyperpod_ha_dev.simulation.scenarios import SCENARIOS

    printed: list[io.StringIO] = []

    def stream() -> io.StringIO:
        printed.append(io.StringIO())
        return printed[-1]

    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(following, "POLL_SECONDS", 0.2)
    monkeypatch.setattr(restore_cli, "result_stream", stream)
    monkeypatch.setattr(status_cli, "result_stream", stream)
    with simulated_run(SCENARIOS["healthy"], ROOT, RestoreSimulatedCluster) as run:
        stack = ["--stack-name", "hyperpod-ha", "--cluster", "ml-cluster"]
        with pytest.raises(SystemExit) as usage:
            main(["restore", "start", *stack, "--mode", "other"])
        assert usage.value.code == 2  # not a mode: a usage error
        dry = main(["restore", "start", *stack, "--mode", "standbys", "--dry-run", "--follow"])
        dry_text = printed[-1].getvalue()
        code = main(["restore", "start", *stack, "--mode", "standbys", "--follow"])
        text = printed[-1].getvalue()
        assert main(["status", *stack]) in (0, 1)
        status_text = printed[-1].getvalue()
        run.stack.stop_running_executions()
    assert dry == 1  # the plan left an action to a person (the dry run's)
    assert "dry run: nothing started" in dry_text
    assert code == 0
    assert "ctl2: start-slurmctld: restored" in text
    assert "last restore: mode standbys, verdict HEALTHY" in status_text  # a dead standby: redundancy none
    assert "ctl2: restored" in status_text


def test_all_hands_control_back_to_the_configured_primary_after_a_failover() -> None:
    from hyperpod_ha_dev.simulation.restore import AfterFailover
    from hyperpod_ha_dev.simulation.scenarios import SCENARIOS

    result = run_restore(ROOT, {"mode": "all"}, AfterFailover, SCENARIOS["failover"])
    assert result.status == "SUCCEEDED", result.output
    assert result.started == ["start ctl1"]
    [outcome] = result.output["results"]
    assert (outcome["controller"], outcome["kind"], outcome["restored"]) == ("ctl1", "hand-back", True)
    assert outcome["what"] == "ctl1: slurmctld runs, logged the primary role and answers ping"


def test_standbys_leaves_the_primary_after_a_failover_and_names_the_command() -> None:
    from hyperpod_ha_dev.simulation.restore import AfterFailover
    from hyperpod_ha_dev.simulation.scenarios import SCENARIOS

    result = run_restore(ROOT, {"mode": "standbys"}, AfterFailover, SCENARIOS["failover"])
    assert result.status == "SUCCEEDED"
    assert result.started == []
    plan = result.output["plan"]["value"]
    assert plan["verdict"] == "FAILED_OVER"
    assert [a["controller"] for a in plan["not_taken"]] == ["ctl1"]


def test_a_hand_back_that_loses_slurmdbds_registration_registers_the_primary_again() -> None:
    from hyperpod_ha_dev.simulation.restore import AfterFailoverRegistrationLost
    from hyperpod_ha_dev.simulation.scenarios import SCENARIOS

    result = run_restore(ROOT, {"mode": "all"}, AfterFailoverRegistrationLost, SCENARIOS["failover"])
    assert result.status == "SUCCEEDED", result.output
    assert result.started[0] == "start ctl1"
    assert any(what.startswith("reconfigure ctl1") for what in result.started)
    assert "Register the primary with slurmdbd" in result.states
    [outcome] = result.output["results"]
    assert outcome["restored"] is True


def open_redundancy_lost(run: EmbeddedRun) -> None:
    """The watchdog's redundancy-lost incident, opened through IncidentFunction as its tick does."""
    opened = run.stack.invoke(
        "IncidentFunction",
        {
            "action": "open",
            "cluster": "ml-cluster",
            "kind": "redundancy-lost",
            "verdict": "",
            "execution_id": "watchdog-tick-1",
            "reasons": ["no standby has been ready for 10 minutes: one more failure stops the cluster"],
        },
    )
    assert opened["created"] is True


def restore_notes(result: RestoreResult) -> list[dict[str, Any]]:
    [lost] = [
        item
        for item in result.ops_items
        if item["OperationalData"][KIND_KEY]["Value"] == "redundancy-lost" and item["Status"] == "Open"
    ]
    return list(json.loads(lost["OperationalData"][RESTORE_ACTIONS_KEY]["Value"]))


def test_the_restores_action_is_noted_on_the_open_redundancy_lost_incident() -> None:
    result = run_restore(ROOT, {"mode": "standbys"}, before=open_redundancy_lost)
    assert result.status == "SUCCEEDED", result.output
    assert result.output["note"]["value"]["noted"] == [result.ops_items[0]["OpsItemId"]]
    [entry] = restore_notes(result)
    assert entry["execution"].endswith(":restore-test")
    assert (
        "ctl2: start-slurmctld: restored (ctl2: slurmctld runs, logged the standby role and answers ping)"
        in (entry["lines"])
    )


def test_a_restore_at_the_hourly_bound_notes_that_restoring_stopped() -> None:
    def open_and_spend_the_hour(run: EmbeddedRun) -> None:
        open_redundancy_lost(run)
        dynamodb, table = boto3.client("dynamodb"), run.stack.ref("StateTable")
        hour = int(time.time()) // 3600
        for spent in (hour, hour + 1):  # an hour that turns during the test is spent too
            for _ in range(RESTORE_MAX_PER_HOUR):
                assert state_table.count_restore_action(
                    dynamodb, table, "ml-cluster", spent, RESTORE_MAX_PER_HOUR, (spent + 2) * 3600
                )

    result = run_restore(ROOT, {"mode": "standbys"}, before=open_and_spend_the_hour)
    assert result.status == "SUCCEEDED", result.output
    assert result.started == []
    [entry] = restore_notes(result)
    stopped = [line for line in entry["lines"] if line.startswith("restoring stopped: ")]
    assert stopped == [result.output["plan"]["value"]["stopped"]]
    assert f"{RESTORE_MAX_PER_HOUR} restore actions on this cluster this hour already" in stopped[0]
    assert any(line.startswith("ctl2: by hand: aws ssm start-session") for line in entry["lines"])


def test_a_failed_note_keeps_neither_the_lease_nor_the_verification(monkeypatch: pytest.MonkeyPatch) -> None:
    from hyperpod_ha.incidents import IncidentFailed, tracking

    def refused(*_: Any) -> Any:
        raise IncidentFailed("UpdateOpsItem oi-000000000001 failed: AccessDeniedException")

    monkeypatch.setattr(tracking, "note_incidents", refused)
    result = run_restore(ROOT, {"mode": "standbys"}, before=open_redundancy_lost)
    assert result.status == "SUCCEEDED", result.output
    assert result.output["note_error"]["Error"] == "IncidentFailed"
    assert "note" not in result.output
    states = result.states
    assert states.index("Note it on the incident") < states.index("Release the cluster")
    assert "Start a verification" in states
    # The verification it started took the lease the restore released.
    assert result.output["verification"]["value"]["outcome"] == "started"


def test_a_restore_stopped_by_hand_frees_the_cluster_through_the_abandoned_run_rule() -> None:
    """A restore stopped while it waits for the started slurmctld (its lease held, its Catch
    never reached): Step Functions' ABORTED event, through the template's rule, releases it."""
    from hyperpod_ha_dev.simulation import scenarios as s
    from hyperpod_ha_dev.simulation.engine import simulated_run
    from hyperpod_ha_dev.simulation.restore import RestoreSimulatedCluster

    with simulated_run(s.SCENARIOS["healthy"], ROOT, RestoreSimulatedCluster) as run:
        sfn, ddb = boto3.client("stepfunctions"), boto3.client("dynamodb")
        table = run.stack.ref("StateTable")
        restores = str(run.stack.outputs["RedundancyRestoreStateMachineArn"])
        execution = sfn.start_execution(
            stateMachineArn=restores,
            name="restore-stopped",
            input=json.dumps({"cluster": "ml-cluster", "mode": "standbys", "wait_seconds": 600}),
        )["executionArn"]
        for _ in range(600):  # until it waits for the slurmctld it started
            history = sfn.get_execution_history(executionArn=execution, maxResults=1000)["events"]
            entered = [
                e["stateEnteredEventDetails"]["name"] for e in history if "stateEnteredEventDetails" in e
            ]
            if "Wait for slurmctld to start" in entered:
                break
            time.sleep(0.1)
        held = state_table.read_lease(ddb, table, "ml-cluster")
        assert held is not None
        assert (held.kind, held.execution_arn) == ("restore", execution)

        sfn.stop_execution(executionArn=execution, error="Stopped", cause="by hand")
        for _ in range(100):  # moto's interpreter stops its thread at its next state
            described = sfn.describe_execution(executionArn=execution)
            if described["status"] != "RUNNING":
                break
            time.sleep(0.1)
        # moto's interpreter says FAILED for an execution stopped in a Wait (AWS: ABORTED); either
        # way no Catch ran: the restore still holds the cluster.
        assert described["status"] in ("ABORTED", "FAILED")
        assert state_table.read_lease(ddb, table, "ml-cluster") == held
        boto3.client("events").put_events(  # as Step Functions would
            Entries=[
                {
                    "Source": "aws.states",
                    "DetailType": "Step Functions Execution Status Change",
                    "Detail": json.dumps(
                        {
                            "executionArn": execution,
                            "stateMachineArn": restores,
                            "name": "restore-stopped",
                            "status": "ABORTED",
                            "input": described["input"],
                        }
                    ),
                    "Resources": [execution],
                }
            ]
        )

        assert state_table.read_lease(ddb, table, "ml-cluster") is None
        run.stack.stop_running_executions()
