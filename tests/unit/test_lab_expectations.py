"""What a lab scenario accepts, judged without the lab: the incident follows the verdict, and
``back`` on Slurm 24.11 ends HEALTHY or DEGRADED only as slurmdbd's registration says."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from hyperpod_ha_dev.simulation.engine import ScenarioResult
from hyperpod_ha_dev.simulation.lab import LAB_SCENARIOS, LabScenarioResult, injections
from hyperpod_ha_dev.simulation.lab.progress import Drill
from hyperpod_ha_dev.simulation.scenarios import Scenario
from hyperpod_ha_dev.simulation.timeline import TimelineEntry

BLANK = "DEGRADED (failed): no controller is registered with slurmdbd (ControlHost empty); ctl2: standby"
HELD = "HEALTHY (verified): ctl1 is active; slurmdbd has 127.0.0.1 registered as the controller"
STANDBY_DOWN = "DEGRADED (failed): standby ctl2: slurmctld not running; slurmdbd has 127.0.0.1 registered"


# The engine's view of ``back``; LabScenarioResult judges by the lab scenario instead.
ENGINE_BACK = Scenario("back", "", (), (), "", expect_verdict="HEALTHY", expect_incidents=0)


def _workflow(verdict: str, detail: str) -> ScenarioResult:
    timeline = [TimelineEntry(30.0, "  verdict", detail)]
    return ScenarioResult(ENGINE_BACK, verdict, [], [{}], [{}], True, timeline)


def _drill() -> Drill:
    hosts = [SimpleNamespace(name="ctl1"), SimpleNamespace(name="ctl2")]
    lab: Any = SimpleNamespace(topology=SimpleNamespace(controller_hosts=hosts))
    run: Any = SimpleNamespace(started=0.0)
    return Drill(lab, run)


@pytest.mark.parametrize(
    ("held", "verdict", "detail", "agrees"),
    [
        (True, "HEALTHY", HELD, True),
        (False, "DEGRADED", BLANK, True),
        (False, "HEALTHY", HELD, False),  # the verdict missed the blank registration
        (True, "DEGRADED", BLANK, False),  # slurmdbd names a controller after all
        (False, "DEGRADED", STANDBY_DOWN, False),  # DEGRADED, but not for the registration
        (False, "DOWN", BLANK, False),
    ],
)
def test_back_agrees_with_slurmdbds_registration(
    monkeypatch: pytest.MonkeyPatch, held: bool, verdict: str, detail: str, agrees: bool
) -> None:
    asked: list[str] = []
    monkeypatch.setattr(injections, "registered", lambda lab, host: asked.append(host) or held)
    drill = _drill()

    injections.registration_agrees(drill, _workflow(verdict, detail))

    assert asked == ["ctl1"]
    assert [(c.name, c.passed) for c in drill.checks] == [
        ("the verdict agrees with slurmdbd's registration", agrees)
    ]
    said = "a" if held else "no"
    assert drill.checks[0].detail.startswith(f"sacctmgr names {said} controller; verdict {detail}")


def _result(series: str, verdict: str, incidents: int) -> LabScenarioResult:
    scenario = LAB_SCENARIOS["back"].on(series)
    status, error = ("SUCCEEDED", None) if verdict == "HEALTHY" else ("FAILED", verdict)
    return LabScenarioResult(
        scenario=ENGINE_BACK,
        verdict=verdict,
        incidents=[{"id": f"oi-{n}"} for n in range(incidents)],
        snapshots=[{}],
        executions=[{"status": status, "error": error}],
        lease_released=True,
        lab_scenario=scenario,
    )


@pytest.mark.parametrize(
    ("series", "verdict", "incidents", "passed"),
    [
        ("24.11", "HEALTHY", 0, True),
        ("24.11", "DEGRADED", 1, True),
        ("24.11", "DEGRADED", 0, False),  # a run not verified opens its incident
        ("24.11", "HEALTHY", 1, False),
        ("24.11", "DOWN", 1, False),
        ("22.05", "HEALTHY", 0, True),
        ("22.05", "DEGRADED", 1, False),  # 22.05 keeps the registration
    ],
)
def test_back_accepts_what_its_release_can_end_with(
    series: str, verdict: str, incidents: int, passed: bool
) -> None:
    result = _result(series, verdict, incidents)

    assert result.passed is passed
    assert result.to_json()["expected"]["incidents"] == (0 if verdict == "HEALTHY" else 1)


def _restore_result(name: str, verdict: str, executions: list[tuple[str, str | None]], incidents: int) -> Any:
    return LabScenarioResult(
        scenario=ENGINE_BACK,
        verdict=verdict,
        incidents=[{"id": f"oi-{n}"} for n in range(incidents)],
        snapshots=[{}],
        executions=[{"status": status, "error": error} for status, error in executions],
        lease_released=True,
        lab_scenario=LAB_SCENARIOS[name],
    )


OK = ("SUCCEEDED", None)


@pytest.mark.parametrize(
    ("name", "verdict", "executions", "incidents", "passed"),
    [
        ("crash-loop", "HEALTHY", [OK, OK, OK], 1, True),  # three runs, the watchdog's incident
        ("crash-loop", "HEALTHY", [OK, OK], 1, False),  # the second attempt's run is missing
        ("crash-loop", "HEALTHY", [OK, OK, OK], 0, False),  # redundancy-lost never opened
        ("standby-restored", "HEALTHY", [OK, OK], 1, True),
        ("standby-restored", "HEALTHY", [OK], 1, False),  # no restore ran, or it started no run
        ("primary-restored", "HEALTHY", [OK, OK], 0, True),
        ("primary-restored", "DEGRADED", [OK, ("FAILED", "DEGRADED")], 0, False),
        ("redundancy-lost", "FAILED_OVER", [OK], 1, True),
        ("isolated-no-restore", "DOWN", [("FAILED", "DOWN")], 1, True),
        ("isolated-no-restore", "DOWN", [("FAILED", "DOWN")], 0, False),
    ],
)
def test_a_restore_scenario_counts_its_runs_and_incidents(
    name: str, verdict: str, executions: list[tuple[str, str | None]], incidents: int, passed: bool
) -> None:
    assert _restore_result(name, verdict, executions, incidents).passed is passed


def test_every_restore_scenario_runs_the_stack_as_deployed_but_for_the_mode_and_grace() -> None:
    names = ["standby-restored", "standby-hung-restored", "redundancy-lost", "primary-restored"]
    names += ["isolated-no-restore", "crash-loop"]
    for name in names:
        scenario = LAB_SCENARIOS[name]
        assert scenario.defaults, name
        assert set(scenario.parameters) <= {"RestoreRedundancy", "RedundancyGraceMinutes"}, name
