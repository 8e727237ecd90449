"""Every scenario end to end: the real ASL on moto's interpreter, the real handlers, the real
probe on simulated controllers answering from captured Slurm output."""

from __future__ import annotations

import pytest

from hyperpod_ha_dev.simulation.engine import run_scenario
from hyperpod_ha_dev.simulation.scenarios import SCENARIOS
from tests.conftest import ROOT

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_scenario_ends_as_expected(name: str) -> None:
    scenario = SCENARIOS[name]
    result = run_scenario(scenario, ROOT)
    summary = result.to_json()
    assert result.verdict == scenario.expect_verdict, summary["timeline"]
    assert len(result.incidents) == scenario.expect_incidents, summary["incidents"]
    assert len(result.snapshots) == scenario.expect_snapshots
    assert len(result.executions) == scenario.expect_executions
    assert result.lease_released
    assert result.passed
    (execution,) = result.executions
    if scenario.expect_verdict in ("HEALTHY", "FAILED_OVER"):
        assert execution["status"] == "SUCCEEDED"
    else:
        assert (execution["status"], execution["error"]) == ("FAILED", scenario.expect_verdict)
        (incident,) = result.incidents
        assert scenario.expect_verdict in incident["title"]
        assert incident["status"] == "Open"


def test_flapping_is_checked_twice_and_needs_no_incident() -> None:
    result = run_scenario(SCENARIOS["flapping"], ROOT)
    verdicts = [e.detail.split(" ")[0] for e in result.timeline if e.what.strip() == "verdict"]
    assert verdicts == ["DOWN", "HEALTHY"]
    assert result.incidents == []


def test_the_duplicate_storm_starts_one_run_and_joins_the_rest() -> None:
    result = run_scenario(SCENARIOS["duplicate-storm"], ROOT)
    outcomes = [e.detail for e in result.timeline if "->" in e.what]
    assert outcomes.count("started") == 1
    assert outcomes.count("duplicate") == 2
    assert outcomes.count("joined") == 20


def test_a_failover_that_just_happened_reads_as_just_logged() -> None:
    # The captures are days old; the scenario moves them to its own time.
    result = run_scenario(SCENARIOS["failover"], ROOT)
    given = zip(result.reason_codes, result.reasons, strict=True)
    (took_over,) = [text for code, text in given if code == "backup-took-over"]
    age = took_over.split("logged 'Running as primary controller' ", 1)[1].split(" ago", 1)[0]
    number, unit = age.split(" ")
    assert unit == "s", took_over
    assert 0 <= int(number) < 60, took_over


def test_every_reason_of_the_verdict_is_kept() -> None:
    # both-down gives four reasons: the old cut to three hid ctl2.
    result = run_scenario(SCENARIOS["both-down"], ROOT)
    assert len(result.reasons) >= 4
    assert any(r.startswith("ctl2: ") for r in result.reasons)
    assert len(result.reason_codes) == len(result.reasons)
    (last,) = [e for e in result.timeline if e.what.strip() == "verdict"][-1:]
    assert last.reasons == result.reasons
    assert all(r in last.detail for r in result.reasons)


def test_a_failover_with_no_standby_left_says_so_and_status_keeps_its_redundancy() -> None:
    """Verified (FAILED_OVER, no incident of the run), yet nothing is left to fail over to: the
    verdict's reasons and its notice say so, and `hyperpod-ha status` keeps the redundancy."""
    import boto3

    from hyperpod_ha.status_records import StatusRecords
    from hyperpod_ha_dev.simulation.engine import EmbeddedRun

    kept: dict[str, object] = {}

    def status(run: EmbeddedRun) -> None:
        records = StatusRecords(boto3.client("dynamodb"), run.stack.ref("StateTable"))
        kept.update(records.read(str(run.stack.parameters["ClusterName"]))["verdict"])

    result = run_scenario(SCENARIOS["failover"], ROOT, after=status)
    assert result.verdict == "FAILED_OVER"
    assert result.incidents == []
    assert result.reason_codes.count("no-ready-standby") == 1
    assert result.reason_codes[1] == "no-ready-standby"
    assert "(ctl2 is active; ctl1: slurmctld not running)" in result.reasons[1]
    assert (kept["redundancy"], kept["standbys"], kept["not_ready"]) == (
        "none",
        [],
        {"ctl1": "slurmctld not running"},
    )
