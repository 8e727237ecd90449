"""A lab scenario's outcome: the workflow's result plus what the lab measured and checked."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hyperpod_ha.verdict import VERIFIED
from hyperpod_ha_dev.simulation.engine import ScenarioResult
from hyperpod_ha_dev.simulation.lab.progress import (
    Check,
)
from hyperpod_ha_dev.simulation.lab.scenario import (
    LabScenario,
)


def final_verdict_detail(result: ScenarioResult) -> str:
    """The last verdict line of the run's timeline ("<VERDICT> (<next>): <reasons>")."""
    entries = [e for e in result.timeline if e.what.strip() == "verdict"]
    return entries[-1].detail if entries else ""


def verdicts_at(result: ScenarioResult, started: float) -> list[float]:
    """When each "Decide the verdict" state ended (epoch seconds), in order."""
    return [started + e.seconds for e in result.timeline if e.what.strip() == "verdict"]


@dataclass
class LabScenarioResult(ScenarioResult):
    """A lab scenario's outcome: the workflow's result (the base class, so the CLI renders both
    alike) plus what the lab measured and checked. ``scenario`` is the engine's view of it."""

    lab_scenario: LabScenario = field(kw_only=True)
    fault: str | None = field(default=None, kw_only=True)
    checks: list[Check] = field(default_factory=list, kw_only=True)
    # To the end of the check that gave the final verdict, and of the first check.
    fault_to_verdict_seconds: float | None = field(default=None, kw_only=True)
    fault_to_first_verdict_seconds: float | None = field(default=None, kw_only=True)
    takeover_seconds: float | None = field(default=None, kw_only=True)
    slurmctld_timeout_seconds: int | None = field(default=None, kw_only=True)
    details: dict[str, Any] = field(default_factory=dict, kw_only=True)

    @property
    def passed(self) -> bool:
        expected = self.lab_scenario
        return (
            self.verdict in expected.expect_verdicts
            and len(self.incidents) == self.expected_incidents
            and len(self.snapshots) == 1
            and len(self.executions) == expected.runs
            and self.execution_ended_as_expected
            and self.lease_released
            and all(check.passed for check in self.checks)
        )

    @property
    def expected_incidents(self) -> int:
        """The workflow's rule: one incident for a run it does not verify, none for one it does
        (unless the scenario counts the watchdog's too)."""
        if self.lab_scenario.incidents is not None:
            return self.lab_scenario.incidents
        return 0 if self.verdict in VERIFIED else 1

    @property
    def execution_ended_as_expected(self) -> bool:
        """A verified run succeeds; any other ends failed with its verdict as the error. With
        several runs (a restore's), the last one gave the final verdict; the scenario checks
        the others."""
        wanted = ("SUCCEEDED", None) if self.verdict in VERIFIED else ("FAILED", self.verdict)
        judged = self.executions if self.lab_scenario.runs == 1 else self.executions[-1:]
        return all((e.get("status"), e.get("error")) == wanted for e in judged)

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        expected = self.lab_scenario
        data.update(
            {
                "lab": True,
                "summary": expected.summary,
                "fault": self.fault,
                "expected": {
                    "verdict": expected.expect_label,
                    "verdicts": sorted(expected.expect_verdicts),
                    "incidents": self.expected_incidents,
                    "snapshots": 1,
                    "executions": expected.runs,
                },
                "checks": [check.to_json() for check in self.checks],
                "fault_to_verdict_seconds": rounded(self.fault_to_verdict_seconds),
                "fault_to_first_verdict_seconds": rounded(self.fault_to_first_verdict_seconds),
                "takeover_seconds": rounded(self.takeover_seconds),
                "slurmctld_timeout_seconds": self.slurmctld_timeout_seconds,
            }
        )
        if expected.why:
            data["why"] = expected.why
        data.update(self.details)
        return data


def rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 1)
