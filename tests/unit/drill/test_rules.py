"""The drill's pure decisions: refuse or plan, measure, jobs, test job, outcome."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hyperpod_ha.acting.node_commands import ScriptOutputRejected
from hyperpod_ha.controllers.models import ControllerReport, NodeEvidence, ReportStatus
from hyperpod_ha.drill import rules
from hyperpod_ha.drill.models import ControllerRef, DrillRequest, InvalidDrillRequest
from hyperpod_ha.drill.node import NodeOutput, parse_node_output
from hyperpod_ha.verdict import evaluate

CTL1 = ControllerRef(0, "ctl1", "i-1", "sagemaker-cluster:abc_controller-machine-i-1", "ctl1", "10.0.0.1")
CTL2 = ControllerRef(1, "ctl2", "i-2", "sagemaker-cluster:abc_controller-machine-i-2", "ctl2", "10.0.0.2")
CTL3 = ControllerRef(2, "ctl3", "i-3", "sagemaker-cluster:abc_controller-machine-i-3", "ctl3", "10.0.0.3")


def report(ref: ControllerRef) -> ControllerReport:
    return ControllerReport(
        instance_id=ref.instance_id,
        status=ReportStatus.CHECKED,
        hostname=ref.hostname,
        private_ip=ref.private_ip,
        target=ref.target,
        node=NodeEvidence(controller_index=ref.index, controller_name=ref.name),
    )


HEALTHY = {
    "verdict": "HEALTHY",
    "active_controller": "ctl1",
    "reasons": ["ctl1 is active"],
    "redundancy": "full",
    "standbys": ["ctl2", "ctl3"],
    "not_ready": {},
}
REPORTS = [report(CTL2), report(CTL1), report(CTL3)]


def test_a_cluster_not_healthy_is_refused_with_the_check_s_reasons() -> None:
    verdict = {"verdict": "DEGRADED", "active_controller": "ctl1", "reasons": ["slurmdbd does not answer"]}
    plan = rules.plan_drill(DrillRequest("c"), verdict, REPORTS)
    assert plan.refused == "the cluster is not HEALTHY now (DEGRADED): slurmdbd does not answer"
    assert plan.target is None


def test_auto_picks_the_first_backup_by_position() -> None:
    plan = rules.plan_drill(DrillRequest("c"), HEALTHY, REPORTS)
    assert (plan.refused, plan.primary, plan.target) == (None, CTL1, CTL2)


@pytest.mark.parametrize("name", ["ctl2", "10.0.0.2", "i-2"])
def test_a_backup_is_named_by_host_address_or_instance(name: str) -> None:
    assert rules.plan_drill(DrillRequest("c", to=name), HEALTHY, REPORTS).target == CTL2


@pytest.mark.parametrize("name", ["ctl3", "10.0.0.3", "i-3"])
def test_a_backup_after_another_is_refused_its_takeover_would_stop_that_one_too(name: str) -> None:
    plan = rules.plan_drill(DrillRequest("c", to=name), HEALTHY, REPORTS)
    assert plan.refused == (
        f"{name} is SlurmctldHost[2]: `scontrol takeover 2` would stop ctl2 too, leaving no standby; "
        "drill to the first backup (ctl2)"
    )
    assert plan.target is None


def test_the_primary_or_an_unknown_host_is_refused() -> None:
    assert "configured primary" in str(
        rules.plan_drill(DrillRequest("c", to="ctl1"), HEALTHY, REPORTS).refused
    )
    refused = rules.plan_drill(DrillRequest("c", to="ctl9"), HEALTHY, REPORTS).refused
    assert refused == "ctl9 is not a checked backup controller (backups: ctl2, ctl3)"


def test_no_backup_checked_is_refused() -> None:
    assert rules.plan_drill(DrillRequest("c"), HEALTHY, [report(CTL1)]).refused is not None


# --- issue 35, finding 10: a drill starts only toward a ready standby, with redundancy full ---


def test_a_healthy_cluster_whose_standby_is_dead_is_refused_naming_it() -> None:
    # The lab's case: ctl2's slurmctld killed, ctl1 serves: HEALTHY, redundancy none. The
    # verdict is the one every check computes (evaluate), from the probes' reports.
    from tests.unit.verdict.cases.verdict_probes import Probe

    reports = [
        Probe(ping="Slurmctld(primary) at ctl1 is UP\nSlurmctld(backup) at ctl2 is DOWN").report(),
        Probe(name="ctl2", slurmctld=None, log="slurmctld_log_ctl2_standby.txt").report(),
    ]
    verdict = evaluate(reports).to_json()
    assert (verdict["verdict"], verdict["redundancy"], verdict["standbys"]) == ("HEALTHY", "none", [])
    plan = rules.plan_drill(DrillRequest("c"), verdict, reports)
    assert plan.refused == (
        "the target ctl2 is not a ready standby (slurmctld not running): a takeover to it would fail "
        "(redundancy none); restore it first"
    )
    assert plan.target is None


def test_a_target_not_ready_is_refused_with_why() -> None:
    verdict = {
        **HEALTHY,
        "redundancy": "reduced",
        "standbys": ["ctl3"],
        "not_ready": {"ctl2": "cannot read the heartbeat"},
    }
    plan = rules.plan_drill(DrillRequest("c"), verdict, REPORTS)
    assert plan.refused is not None
    assert plan.refused.startswith("the target ctl2 is not a ready standby (cannot read the heartbeat)")


def test_a_ready_target_beside_a_standby_not_ready_is_refused_naming_that_one() -> None:
    # Three controllers: ctl2 ready, ctl3 not. After the takeover ctl1 is down and ctl3 not
    # ready: the drill itself would leave the cluster with no standby.
    verdict = {
        **HEALTHY,
        "redundancy": "reduced",
        "standbys": ["ctl2"],
        "not_ready": {"ctl3": "slurmctld not running"},
    }
    plan = rules.plan_drill(DrillRequest("c"), verdict, REPORTS)
    assert plan.refused == (
        "redundancy is reduced, not full: ctl3: slurmctld not running; "
        "after the takeover no standby would be ready"
    )


@pytest.mark.parametrize("missing", ["redundancy", "standbys"])
def test_a_check_that_says_nothing_of_redundancy_is_refused(missing: str) -> None:
    verdict = {k: v for k, v in HEALTHY.items() if k != missing}
    assert rules.plan_drill(DrillRequest("c"), verdict, REPORTS).refused is not None


def test_measure_records_active_and_verified_seconds_once() -> None:
    phase = rules.new_phase("takeover", CTL2, started_at=100.0, max_checks=3)
    first = rules.measure(phase, {"verdict": "DOWN", "active_controller": None}, now=101.0)
    assert (first["checks"], first["next"], first["active_seconds"]) == (1, "check-again", None)
    second = rules.measure(first, {"verdict": "DEGRADED", "active_controller": "ctl2"}, now=103.5)
    assert (second["active_seconds"], second["verified_seconds"], second["next"]) == (
        3.5,
        None,
        "check-again",
    )
    third = rules.measure(second, {"verdict": "FAILED_OVER", "active_controller": "ctl2"}, now=105.0)
    assert (third["active_seconds"], third["verified_seconds"], third["verified"]) == (3.5, 5.0, True)
    assert third["next"] == "done"


def test_a_hand_back_not_yet_converged_keeps_checking_until_verified() -> None:
    # ctl1 is active again, but the standby has not settled yet.
    degraded = {
        "verdict": "DEGRADED",
        "active_controller": "ctl1",
        "reasons": ["standby ctl2: slurmctld not running"],
    }
    phase = rules.new_phase("hand-back", CTL1, started_at=0.0, max_checks=4)
    for check in range(1, 4):
        phase = rules.measure(phase, degraded, now=float(check))
        assert (phase["next"], phase["verified"], phase["active_seconds"]) == ("check-again", False, 1.0)
    done = rules.measure(phase, {"verdict": "HEALTHY", "active_controller": "ctl1"}, now=4.0)
    assert (done["next"], done["verified"], done["verified_seconds"]) == ("done", True, 4.0)


def test_measure_gives_up_after_max_checks() -> None:
    phase = rules.new_phase("hand-back", CTL1, started_at=0.0, max_checks=1)
    done = rules.measure(phase, {"verdict": "FAILED_OVER", "active_controller": "ctl2"}, now=1.0)
    assert (done["expected"], done["next"], done["verified"]) == ("HEALTHY", "done", False)


def test_jobs_still_running_or_completed_survive_others_are_lost() -> None:
    after = NodeOutput(
        0,
        jobs={"4": "RUNNING", "5": "PENDING"},
        accounted={"6": ("COMPLETED", "0:0"), "7": ("NODE_FAIL", "0:0"), "8": ("COMPLETED", "1:0")},
    )
    judged = rules.judge_jobs(["4", "5", "6", "7", "8", "9"], after)
    assert judged["survived"] == ["4", "6"]
    assert judged["lost"] == {
        "5": "PENDING",
        "7": "NODE_FAIL exit 0:0",
        "8": "COMPLETED exit 1:0",
        "9": "unknown",
    }
    assert judged["all_survived"] is False


def test_the_test_job_runs_or_fails_or_stays_pending_until_the_checks_run_out() -> None:
    job: dict[str, Any] = {"id": "100", "checks": 0}
    running = rules.follow_test_job(job, NodeOutput(0, jobs={"100": "RUNNING"}), max_checks=3)
    assert running["next"] == "check-again"
    done = rules.follow_test_job(running, NodeOutput(0, accounted={"100": ("COMPLETED", "0:0")}), 3)
    assert (done["ran"], done["next"]) == (True, "done")
    failed = rules.follow_test_job(job, NodeOutput(0, accounted={"100": ("FAILED", "1:0")}), 3)
    assert (failed["ran"], failed["next"]) == (False, "done")
    pending = rules.follow_test_job({"id": "100", "checks": 2}, NodeOutput(0, jobs={"100": "PENDING"}), 3)
    assert (pending["ran"], pending["state"], pending["next"]) == (False, "PENDING", "done")


def completed_state() -> dict[str, Any]:
    return {
        "lease": {"taken": True},
        "plan": {"refused": None},
        "takeover": {"verified": True, "verdict": "FAILED_OVER"},
        "jobs": {"all_survived": True},
        "test_job": {"ran": True},
        "hand_back": None,
        "error": None,
    }


def test_outcomes() -> None:
    assert rules.outcome_of(completed_state()) == ("completed", [], True)
    assert (
        rules.outcome_of({**completed_state(), "lease": {"taken": False, "reason": "held"}})[0] == "refused"
    )
    lost = rules.outcome_of({**completed_state(), "jobs": {"all_survived": False, "lost": {"4": "FAILED"}}})
    assert lost[0] == "failed"
    assert lost[2] is True  # jobs lost, but the cluster is verified
    not_back = {**completed_state(), "hand_back": {"verified": False, "verdict": "FAILED_OVER"}}
    assert rules.outcome_of(not_back)[0:3:2] == ("failed", False)


def test_an_error_after_the_takeover_began_leaves_the_cluster_not_verified() -> None:
    error = {"Error": "DrillCommandFailed", "Cause": "TargetUnreachable"}
    before = {"lease": {"taken": True}, "plan": {"refused": None}, "error": error, "takeover_started": False}
    assert rules.outcome_of(before)[0::2] == ("failed", True)
    assert rules.outcome_of({**before, "takeover_started": True})[0::2] == ("failed", False)


def test_node_output_is_parsed_and_a_cut_output_is_rejected() -> None:
    text = "squeue_rc=0\njob 4 RUNNING\njob 5_1 PENDING\nacct 3 COMPLETED 0:0\nHYPERPOD_HA_RESULT rc=0\n"
    output = parse_node_output(text)
    assert (output.rc, output.values, output.jobs) == (
        0,
        {"squeue_rc": "0"},
        {"4": "RUNNING", "5_1": "PENDING"},
    )
    assert output.accounted == {"3": ("COMPLETED", "0:0")}
    with pytest.raises(ScriptOutputRejected):
        parse_node_output("squeue_rc=0\njob 4 RUNNING\n")


@given(st.text(max_size=300))
def test_any_node_output_parses_or_is_rejected_with_a_value_error(text: str) -> None:
    with contextlib.suppress(ValueError):
        parse_node_output(text)


@pytest.mark.parametrize(
    "data",
    [
        None,
        {},
        {"cluster": "c; rm"},
        {"cluster": "c\n"},
        {"cluster": "c", "to": "ctl2 && reboot"},
        {"cluster": "c", "hand_back": "yes"},
        {"cluster": "c", "poll_seconds": 601},
        {"cluster": "c", "max_checks": True},
    ],
)
def test_bad_requests_are_rejected(data: Any) -> None:
    with pytest.raises(InvalidDrillRequest):
        DrillRequest.from_json(data)


def test_a_dry_run_is_completed_without_touching_the_cluster() -> None:
    state = {"lease": {"taken": True}, "plan": {"refused": None}, "takeover": None, "error": None}
    assert rules.outcome_of(state) == ("completed", [], True)


def test_the_sample_drill_input_is_a_valid_request() -> None:
    import json

    from tests.conftest import EVENTS

    request = DrillRequest.from_json(json.loads((EVENTS / "stepfunctions_drill_start.json").read_text()))
    assert (request.cluster, request.to, request.hand_back, request.dry_run) == (
        "ml-cluster",
        "auto",
        True,
        False,
    )


def test_measure_carries_what_is_left_after_the_change_of_control() -> None:
    phase = rules.new_phase("takeover", CTL1, started_at=0.0, max_checks=4)
    assert (phase["redundancy"], phase["standbys"]) == ("unknown", [])
    verdict = {
        "verdict": "FAILED_OVER",
        "active_controller": "ctl1",
        "redundancy": "reduced",
        "standbys": ["ctl3"],
    }
    measured = rules.measure(phase, verdict, now=2.0)
    assert (measured["redundancy"], measured["standbys"]) == ("reduced", ["ctl3"])


def test_the_report_says_what_the_last_check_left_even_when_refused() -> None:
    from hyperpod_ha.drill.report import build_report

    refused = {"request": {"cluster": "c"}, "plan": {"refused": "x"}, "check_redundancy": "none"}
    report = build_report({**refused, "check_standbys": []}, "refused", ["x"], True, 0, "e")
    assert (report["redundancy"], report["standbys"]) == ("none", [])
    after = {**refused, "takeover": {"redundancy": "reduced", "standbys": ["ctl3"]}}
    report = build_report(after, "completed", [], True, 0, "e")
    assert (report["redundancy"], report["standbys"]) == ("reduced", ["ctl3"])


@pytest.mark.parametrize(("version", "refused"), [("24.11.4", True), ("24.11.0", True), ("24.11.5", False)])
def test_a_release_whose_takeover_is_known_bad_is_refused_with_the_advisory(
    version: str, refused: bool
) -> None:
    evidence = {"ctl1": {"slurm_version": "24.11.5"}, "ctl2": {"slurm_version": version}}
    plan = rules.plan_drill(DrillRequest("c", to="ctl2"), {**HEALTHY, "evidence": evidence}, REPORTS)
    if refused:
        assert plan.refused is not None
        assert plan.refused.startswith(
            f"a takeover now walks into a known Slurm defect: Slurm {version} on ctl2"
        )
        assert (
            "the backup slurmctld fails on its second takeover (slurm-24.11.5-second-takeover" in plan.refused
        )
    else:
        assert plan.refused is None
