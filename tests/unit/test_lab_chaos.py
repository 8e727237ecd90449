"""The chaos run's pure parts: the seeded plan, the report's pass rule and counts, the Fail
states an execution may end in, and the command's refusals (no lab needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hyperpod_ha_cli.main import main
from hyperpod_ha_dev.simulation.lab.chaos_plan import HEALS, ChaosPlanError, PlannedFault, plan_chaos
from hyperpod_ha_dev.simulation.lab.chaos_report import (
    ChaosResult,
    IncidentRecord,
    Observation,
    chaos_table,
    duplicates_by_problem,
    judge_fault,
)
from hyperpod_ha_dev.simulation.lab.stack_records import declared_failures
from hyperpod_ha_dev.simulation.lab.status_log import message_of
from hyperpod_lab.faults import FAULTS

ROOT = Path(__file__).resolve().parents[2]
CONTROLLERS = ("ctl1", "ctl2")
NODES = ("node1", "node2")


def test_the_same_seed_gives_the_same_plan_and_another_seed_another() -> None:
    first = plan_chaos(7, 20, CONTROLLERS, NODES)

    assert first == plan_chaos(7, 20, CONTROLLERS, NODES)
    assert first.faults != plan_chaos(8, 20, CONTROLLERS, NODES).faults


@pytest.mark.parametrize("seed", range(40))
def test_a_plan_has_one_healable_fault_at_a_time_healed_by_the_end(seed: int) -> None:
    plan = plan_chaos(seed, 20, CONTROLLERS, NODES)

    assert plan.faults
    end = 0.0
    for fault in plan.faults:
        assert fault.at > end  # after the previous heal: never two at once
        assert fault.heal == HEALS[fault.fault]
        assert fault.fault in FAULTS  # both in the lab's catalog
        assert fault.heal in FAULTS
        assert fault.host in CONTROLLERS or (fault.fault == "cut" and fault.host in NODES)
        assert fault.heal_at > fault.at
        end = fault.heal_at
    assert end <= 20 * 60


def test_every_healable_fault_of_the_catalog_is_chosen_over_many_seeds() -> None:
    chosen = {f.fault for seed in range(30) for f in plan_chaos(seed, 30, CONTROLLERS, NODES).faults}

    assert chosen == set(HEALS)
    # Only faults that have their heal: "start", "cont", ... are heals, never faults.
    assert not chosen & set(HEALS.values())


def test_a_short_run_has_a_few_faults() -> None:
    counts = {len(plan_chaos(seed, 3, CONTROLLERS, NODES).faults) for seed in range(20)}

    assert counts <= {1, 2, 3}


@pytest.mark.parametrize("minutes", [0, -1, 121, float("nan"), float("inf")])
def test_minutes_out_of_bounds_are_refused(minutes: float) -> None:
    with pytest.raises(ChaosPlanError, match="minutes must be"):
        plan_chaos(1, minutes, CONTROLLERS)


def test_a_lab_without_controllers_is_refused() -> None:
    with pytest.raises(ChaosPlanError, match="no controller"):
        plan_chaos(1, 3, ())


KILL = PlannedFault(10.0, "kill", "ctl2", "start", 70.0)


def test_detection_is_the_first_verdict_that_departs_from_the_healthy_one() -> None:
    seen = [
        Observation(105.0, "tick", "HEALTHY", "full", ("ctl1 is active",)),  # before: not its own
        Observation(112.0, "tick", "HEALTHY", "full", ("ctl1 is active",)),
        Observation(130.0, "tick", "HEALTHY", "none", ("ctl2: slurmctld not running",)),
        Observation(131.0, "run", "HEALTHY", "none"),
        Observation(160.0, "tick", "HEALTHY", "full"),
        Observation(200.0, "tick", "DOWN", None),  # after the next fault's injection
    ]

    outcome = judge_fault(KILL, 110.0, 170.0, 190.0, seen, frozenset({"ctl1"}))

    assert outcome.detection_seconds == 20.0
    assert outcome.verdicts == ("HEALTHY/full", "HEALTHY/none", "HEALTHY/full")


def test_a_reason_naming_the_host_is_a_detection_unless_the_healthy_cluster_names_it() -> None:
    seen = [Observation(115.0, "tick", "HEALTHY", "full", ("heartbeat unreadable on ctl2",))]

    assert judge_fault(KILL, 110.0, 170.0, 190.0, seen).detection_seconds == 5.0
    assert judge_fault(KILL, 110.0, 170.0, 190.0, seen, frozenset({"ctl2"})).detection_seconds is None


def test_a_refused_fault_has_no_verdicts() -> None:
    outcome = judge_fault(
        KILL, None, None, 190.0, [Observation(115.0, "tick", "DOWN")], detail=("refused: x", "")
    )

    assert outcome.verdicts == ()
    assert outcome.detection_seconds is None
    assert outcome.detail == "refused: x"


def _incident(number: int, kind: str, status: str, opened: float, changed: float) -> IncidentRecord:
    return IncidentRecord(f"oi-{number}", kind, status, opened, changed)


def test_a_problem_opened_again_after_its_resolution_is_not_a_duplicate() -> None:
    incidents = [
        _incident(1, "DOWN", "Resolved", 100, 150),
        _incident(2, "DOWN", "Resolved", 160, 200),  # after the first was resolved
        _incident(3, "redundancy-lost", "Resolved", 120, 300),
        _incident(4, "redundancy-lost", "Open", 130, 130),  # while the third was open
        _incident(5, "redundancy-lost", "Resolved", 140, 145),  # while the third was still open
    ]

    assert duplicates_by_problem(incidents) == {"redundancy-lost": 2}


def _result(**changes: object) -> ChaosResult:
    plan = plan_chaos(3, 3, CONTROLLERS, NODES)
    fields: dict[str, object] = {
        "plan": plan,
        "restore_mode": "standbys",
        "started": 1000.0,
        "faults": tuple(
            judge_fault(
                p,
                1000 + p.at,
                1000 + p.heal_at,
                1000 + p.heal_at + 1,
                [Observation(1000 + p.at + 3, "tick", "DOWN")],
            )
            for p in plan.faults
        ),
        "ticks": 9,
        "runs_started": 2,
        "incidents": (_incident(1, "DOWN", "Resolved", 1010, 1100),),
        "leases_held_at_end": 0,
        "uncaught_failures": (),
        "restore_actions": ({"controller": "ctl2", "kind": "start-slurmctld", "restored": True},),
        "final": Observation(1300.0, "tick", "HEALTHY", "full"),
        "final_heal": ("slurmctld restarted on ctl2",),
    }
    return ChaosResult(**{**fields, **changes})  # type: ignore[arg-type]


def test_a_run_that_ends_healthy_with_everything_resolved_passes() -> None:
    result = _result()
    data = result.to_json()

    assert result.passed
    assert data["passed"] is True
    assert data["faults_injected"] == len(result.plan.faults) == len(data["faults"])
    assert data["faults"][0]["detection_seconds"] == 3.0
    for key in ("incidents_open_at_end", "leases_held_at_end", "duplicate_ops_items", "uncaught_failures"):
        assert data[key] == 0
    assert data["restore_actions"] == [{"controller": "ctl2", "kind": "start-slurmctld", "restored": True}]
    json.dumps(data)  # JSON as it is


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        (
            {"final": Observation(1300.0, "tick", "DEGRADED", "full")},
            "final verdict DEGRADED/full, not HEALTHY",
        ),
        ({"final": None}, "final verdict none"),
        ({"incidents": (_incident(1, "redundancy-lost", "Open", 1010, 1010),)}, "1 incident(s) left open"),
        ({"leases_held_at_end": 1}, "1 lease(s) still held"),
        ({"uncaught_failures": ("run-1: States.Runtime: boom",)}, "1 execution(s) failed uncaught"),
        (
            {
                "incidents": (
                    _incident(1, "DOWN", "Resolved", 1010, 1100),
                    _incident(2, "DOWN", "Resolved", 1020, 1100),
                )
            },
            "1 duplicate OpsItem(s)",
        ),
    ],
)
def test_each_rule_of_the_pass_fails_the_run(changes: dict[str, object], why: str) -> None:
    result = _result(**changes)

    assert not result.passed
    assert result.to_json()["passed"] is False
    assert any(failure.startswith(why) for failure in result.failures()), result.failures()
    assert why in chaos_table(result)


def test_the_table_has_a_line_per_fault_and_the_counts() -> None:
    result = _result()
    table = chaos_table(result).splitlines()

    assert table[0] == "chaos run: seed 3, 3 min, restore standbys: PASSED"
    fault_lines = table[2 : 2 + len(result.faults)]
    assert all(
        f" {f.planned.fault} " in line and "3.0 s" in line and "DOWN" in line
        for f, line in zip(result.faults, fault_lines, strict=True)
    )
    text = "\n".join(table)
    assert "incidents opened: 1, resolved: 1, left open: 0" in text
    assert "restore actions: ctl2 start-slurmctld (restored)" in text
    assert "final verdict: HEALTHY/full" in text


def test_only_errors_no_fail_state_names_are_uncaught() -> None:
    definition = json.loads((ROOT / "statemachine" / "failover_verification.asl.json").read_text())

    declared = declared_failures(definition)

    assert {"DEGRADED", "DOWN", "SPLIT_BRAIN", "UNKNOWN", "InvalidRequest", "VerificationError"} <= declared
    assert "States.TaskFailed" not in declared
    nested = {
        "States": {
            "each": {"Type": "Map", "ItemProcessor": {"States": {"f": {"Type": "Fail", "Error": "Inner"}}}}
        }
    }
    assert declared_failures(nested) == {"Inner"}


def test_the_programs_log_line_becomes_the_message_it_would_have_published() -> None:
    line = "2026-12-04T10:00:00Z Slurm Controller is ON, (10.77.0.12, Primary Node)"

    assert message_of(line) == "Slurm Controller is ON, (10.77.0.12, Primary Node)"
    assert message_of("2026-12-04T10:00:00Z") == ""


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--minutes", "0", "--seed", "1"],
            "hyperpod-ha lab chaos: minutes must be more than 0 and at most 120",
        ),
        (["--minutes", "3", "--seed", "1"], "hyperpod-ha lab chaos: the lab is not up"),
        (["--minutes", "3", "--seed", "1", "--restore", "most"], "hyperpod-ha lab chaos: argument --restore"),
        (["--minutes", "3"], "hyperpod-ha lab chaos: the following arguments are required: --seed"),
        (["--minutes", "x", "--seed", "1"], "hyperpod-ha lab chaos: argument --minutes: invalid float"),
    ],
)
def test_refused_chaos_exits_2_with_one_line(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    root = tmp_path / "lab"

    try:
        code = main(["lab", "chaos", "--root", str(root), *argv])
    except SystemExit as exited:  # argparse's refusals
        code = int(str(exited.code))

    err = capfd.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1
    assert err[0].startswith(message), err
    assert not root.exists()
