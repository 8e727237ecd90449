"""The benchmark's results: the lab verdicts, the results' shape, the table, hostile inputs.

Nothing here is timed; the measurements themselves run with ``make bench``.
"""

from __future__ import annotations

from typing import Any

from bench import lab_restore
from bench.lab_verdict import LabRun, target_seconds
from bench.lab_verdict import report as lab_report
from bench.report import assemble, checks, errors, format_table, problems
from bench.stats import at_most

# --- lab ------------------------------------------------------------------------------------


def _lab_run(scenario: str, seconds: float | None, verdict: str, timeout: int | None = 10) -> LabRun:
    checks = [{"seconds": 1.0, "what": "  verdict", "detail": f"{verdict} (verified)"}]
    return LabRun(scenario, verdict, True, seconds, timeout, "22.05.8", len(checks), checks)


def test_lab_targets_follow_slurmctld_timeout_and_the_margin() -> None:
    assert target_seconds("failover", 10, 20) == 20
    assert target_seconds("both-down", 10, 20) == 45
    assert target_seconds("both-down", 120, 20) == 155


def test_each_lab_scenario_is_the_median_run_with_its_timeout_and_version() -> None:
    runs = {
        "failover": [_lab_run("failover", s, "FAILED_OVER") for s in (13.9, 14.6, 13.1)],
        "both-down": [_lab_run("both-down", s, "DOWN") for s in (33.0, 31.5, 47.0)],
    }

    result = lab_report(runs, margin=20)

    failover, both_down = result["scenarios"]["failover"], result["scenarios"]["both-down"]
    assert (failover["value"], failover["target"], failover["met"]) == (13.9, 20, True)
    assert failover["fault_to_verdict_seconds"] == [13.9, 14.6, 13.1]
    assert (failover["slurmctld_timeout_seconds"], failover["slurm_version"]) == (10, "22.05.8")
    assert (both_down["value"], both_down["target"], both_down["met"]) == (33.0, 45, True)
    assert result["margin_seconds"] == 20


def test_a_lab_run_without_its_verdict_is_an_error_with_the_timelines() -> None:
    runs = {"failover": [_lab_run("failover", 14.0, "FAILED_OVER"), _lab_run("failover", None, "DEGRADED")]}

    result = lab_report(runs, margin=20)["scenarios"]["failover"]

    assert result["error"] == "run(s) [1] ended without a measured FAILED_OVER verdict"
    assert result["verdicts"] == ["FAILED_OVER", "DEGRADED"]
    assert "met" not in result


def test_a_slow_final_verdict_misses_its_target_with_a_reason() -> None:
    result = lab_report({"both-down": [_lab_run("both-down", 52.0, "DOWN")]}, margin=20)

    check = result["scenarios"]["both-down"]
    assert check["met"] is False
    assert "later than its target" in check["note"]


def test_a_lab_run_reads_what_simulate_lab_json_reports() -> None:
    data = {
        "scenario": "both-down",
        "verdict": "DOWN",
        "passed": True,
        "fault_to_verdict_seconds": 31.2,
        "slurmctld_timeout_seconds": 10,
        "timeline": [{"seconds": 2.0, "what": "  verdict", "detail": "DOWN"}] * 4,
    }
    run = LabRun.from_json(data, "24.11.5")
    assert (run.fault_to_verdict_seconds, run.checks, run.slurm_version) == (31.2, 4, "24.11.5")


# --- results and table -----------------------------------------------------------------------


def _results() -> dict[str, Any]:
    cold = {
        "target": 1.3,
        "rounds": 7,
        "baseline": {"wall_ms_median": 200.0},
        "functions": {
            "HyperPodEventFunction": at_most(1.2, 1.3, wall_ms_median=240.0),
            "IncidentFunction": at_most(1.6, 1.3, "compile the layer", wall_ms_median=320.0),
        },
    }
    package = {
        "functions": {
            "HyperPodEventFunction": at_most(2100, 102400, unit="bytes zipped"),
            "IncidentFunction": {"error": "functions/incident is not built"},
        },
        "layers": {
            "HyperpodHaLayer": at_most(
                8_600_000,
                15 * 1024 * 1024,
                zipped_bytes=3_000_000,
                boto3_excluded={"value": True, "target": True, "met": True},
                all_extensions_arm64=True,
            )
        },
    }
    return assemble(
        {"generated_at": "now"},
        {
            "cold_start": cold,
            "package_size": package,
            "storm": {"skipped": "not this time"},
            "workflow_cost": {"skipped": "simulation not available"},
            "watchdog_cost": {"skipped": "the template has no WatchdogFunction"},
            "lab_verdict": {"skipped": "the Slurm lab needs root"},
        },
    )


def test_results_put_each_function_s_figures_together() -> None:
    results = _results()

    node = results["functions"]["HyperPodEventFunction"]
    assert node["cold_start_ratio"] == 1.2
    assert node["cold_start"]["met"] is True
    assert node["package"]["value"] == 2100
    assert "functions" not in results["cold_start"]
    assert problems(results) == []
    assert errors(results) == ["functions.IncidentFunction.package: functions/incident is not built"]


def test_every_missed_target_is_listed() -> None:
    missed = [path for path, check in checks(_results()) if not check["met"]]

    assert missed == ["functions.IncidentFunction.cold_start"]


def test_a_check_that_contradicts_its_numbers_is_a_problem() -> None:
    results = _results()
    results["functions"]["HyperPodEventFunction"]["cold_start"]["met"] = False
    del results["lab_verdict"]
    results["layers"]["HyperpodHaLayer"].pop("target")

    assert problems(results) == [
        "section lab_verdict is missing",
        "functions.HyperPodEventFunction.cold_start: met does not follow from value and target",
        "layers.HyperpodHaLayer: check without target",
    ]


def test_the_table_shows_figures_misses_and_skips() -> None:
    table = format_table(_results())

    assert "HyperPodEventFunction            1.20     240    yes     2.1 KiB    yes" in table
    assert "IncidentFunction                 1.60     320 MISSED   error" in table
    assert "Layer HyperpodHaLayer: 8.2 MiB unzipped (target 15.0 MiB) yes" in table
    assert "Workflow cost: skipped: simulation not available" in table
    assert "Watchdog cost: skipped: the template has no WatchdogFunction" in table
    assert "Lab time to verdict: skipped: the Slurm lab needs root" in table
    assert "Embedded stack: skipped: not measured" in table
    assert "Lab chaos run: skipped: not measured" in table
    assert table.endswith("1 target(s) missed: functions.IncidentFunction.cold_start")


def test_the_table_shows_the_chaos_run_with_its_command_and_its_own_table() -> None:
    results = _results()
    results["lab_chaos"] = at_most(
        1,
        0,
        "1 incident(s) left open",
        command="hyperpod-ha lab chaos --minutes 20 --seed 24 --restore standbys",
        slurm="24.11",
        table=["chaos run: seed 24, 20 min, restore standbys: FAILED: 1 incident(s) left open", "..."],
    )

    table = format_table(results)

    assert (
        "Lab chaos run (`hyperpod-ha lab chaos --minutes 20 --seed 24 --restore standbys`, Slurm 24.11): "
        "1 pass rule(s) failed; target <= 0 MISSED"
    ) in table
    assert "  chaos run: seed 24, 20 min, restore standbys: FAILED: 1 incident(s) left open" in table
    assert table.endswith("2 target(s) missed: functions.IncidentFunction.cold_start, lab_chaos")
    assert problems(results) == []


# --- hostile input ---------------------------------------------------------------------------


def test_hostile_inputs_are_at_most_1_mib_and_each_gives_its_expected_outcome() -> None:
    from bench.input_parsing import (
        MAX_PAYLOAD_BYTES,
        cases,
        eventbridge_events,
        payload_bytes,
        sns_event,
        sns_messages,
    )
    from hyperpod_ha.ingestion.dead_letter_body import MAX_KEPT_BYTES
    from hyperpod_ha.ingestion.rejected_inputs import RejectedInputs

    for subject, message in sns_messages().values():
        assert payload_bytes(sns_event(subject, message)) <= MAX_PAYLOAD_BYTES
    for name, event in eventbridge_events().items():
        if name != "deep-nesting-beyond-json":  # no JSON encoder writes it; the reject path must
            assert payload_bytes(event) <= MAX_PAYLOAD_BYTES, name

    class Sqs:
        def __init__(self) -> None:
            self.bodies: list[str] = []

        def send_message(self, **request: Any) -> dict[str, Any]:
            self.bodies.append(request["MessageBody"])
            return {}

    sqs = Sqs()
    outcomes = {name: run(RejectedInputs(sqs, "q"))[0] for name, run in cases()}  # type: ignore[arg-type]
    parsed = {
        "sns/valid",
        "sns/valid-longest",
        "eventbridge/valid",
        "eventbridge/huge-reason",
    }
    assert {name for name, outcome in outcomes.items() if outcome == "parsed"} == parsed
    assert set(outcomes.values()) == {"parsed", "rejected"}
    assert len(sqs.bodies) == len(outcomes) - len(parsed)
    assert max(len(body.encode()) for body in sqs.bodies) <= MAX_KEPT_BYTES


def test_the_hostile_input_line_in_the_table() -> None:
    results = _results()
    results["input_parsing"] = {
        "worst": at_most(12.5, 50.0, input="sns/whitespace-only"),
        "largest_rejected_body_bytes": 190_000,
        "inputs": {"sns/valid": {}, "sns/whitespace-only": {}},
    }
    assert problems(results) == []
    assert (
        "Hostile input (SNS/EventBridge payloads up to 1 MiB, 2 kinds): slowest sns/whitespace-only "
        "12.5 ms parsed or rejected (target <= 50 ms) yes; largest dead-letter body 185.5 KiB"
    ) in format_table(results)


def test_the_labs_own_figures_are_checks_in_the_table() -> None:
    results = _results()
    results["lab_timings"] = {
        "slurm": "24.11",
        "up_seconds": at_most(8.4, 30, unit="seconds", reused=False),
        "up_again_seconds": at_most(0.3, 5, unit="seconds", reused=True),
        "takeover_seconds": at_most(17.0, 15, unit="seconds", slurmctld_timeout=10),
        "down_seconds": {"error": "lab down failed"},
    }

    missed = [path for path, check in checks(results) if not check["met"]]
    table = format_table(results)

    assert missed == ["functions.IncidentFunction.cold_start", "lab_timings.takeover_seconds"]
    assert "Lab up_seconds (Slurm 24.11): 8.4 s; target <= 30 s" in table
    assert "Lab down_seconds: error: lab down failed" in table


def test_the_embedded_stack_line_in_the_table() -> None:
    results = _results()
    results["embedded_stack"] = at_most(3.4, 10.0, unit="seconds", first_seconds=4.1, rounds=5, resources=108)
    assert problems(results) == []
    assert (
        "Embedded stack, 108 resources: created in 3.4 s (median of 5; the first, translating the "
        "template, 4.1 s); target <= 10 s yes"
    ) in format_table(results)


def test_the_hostile_node_text_line_in_the_table() -> None:
    results = _results()
    results["input_parsing"] = {
        "worst": at_most(12.5, 50.0, input="sns/whitespace-only"),
        "largest_rejected_body_bytes": 190_000,
        "inputs": {"sns/valid": {}},
        "node_text": {
            "worst": at_most(61.0, 50.0, input="probe/parse_probe_output/empty-lines"),
            "inputs": {"probe/parse_probe_output/empty-lines": {}, "slurm/parse_ping/equals": {}},
        },
    }
    assert problems(results) == []
    unmet = [path for path, check in checks(results) if not check["met"]]
    assert "input_parsing.node_text.worst" in unmet  # checked like every other target
    assert (
        "Hostile node text (Slurm sections at their cap, probe and roll-out output at 4 MiB, 2 kinds): "
        "slowest probe/parse_probe_output/empty-lines 61.0 ms parsed or rejected (target <= 50 ms) MISSED"
    ) in format_table(results)


def test_hostile_node_text_is_at_its_largest_and_each_gives_a_result_or_a_typed_reject() -> None:
    from bench.node_text_parsing import MAX_OUTPUT_BYTES, PARSERS, node_reports, probe_outputs, section_texts
    from bench.node_text_parsing import cases as node_text_cases
    from hyperpod_ha.slurm.probe_output import MAX_SECTION_CHARS

    assert all(MAX_SECTION_CHARS - 64 <= len(text) <= MAX_SECTION_CHARS for text in section_texts().values())
    assert all(
        len(text) <= MAX_OUTPUT_BYTES for text in [*probe_outputs().values(), *node_reports().values()]
    )
    outcomes = {name: run() for name, run in node_text_cases()}
    assert set(outcomes.values()) == {"parsed", "rejected"}
    assert {name.split("/")[1] for name in outcomes if name.startswith("slurm/")} == set(PARSERS)
    assert outcomes["probe/parse_probe_output/marker-flood"] == "rejected"
    assert outcomes["probe/report_from_result/marker-flood"] == "parsed"  # a PROBE_FAILED report
    assert outcomes["rollout/parse_node_report/report-after-noise"] == "parsed"
    assert outcomes["rollout/parse_node_report/deep-line"] == "rejected"


def test_the_role_log_shapes_are_what_they_say() -> None:
    # The bench's role-line inputs (issue 35) reach the parser's whole-message path: a user's
    # phrase after a real message start is no role, slurmctld's own journal line is one.
    from bench.node_text_parsing import section_texts
    from hyperpod_ha.slurm import parse_role_log

    texts = section_texts()
    assert parse_role_log(texts["forged-role-lines"]).lines == ()
    journal = parse_role_log(texts["journal-role-lines"]).lines
    assert {line.event for line in journal} == {"taking_over"}  # and not empty
    assert parse_role_log(texts["open-brackets"]).lines == ()
    assert parse_role_log(texts["journal-header-misses"]).lines == ()


def _restore_run(seconds: float | None, passed: bool = True) -> dict[str, Any]:
    return {
        "passed": passed,
        "verdict": "HEALTHY",
        "fault_to_verdict_seconds": seconds,
        "watchdog_detect_seconds": 3.2,
        "checks": [{"name": "a check", "passed": passed}],
    }


def test_the_restore_figures_are_checks_with_their_worst_case() -> None:
    section = lab_restore.report({"standbys": [_restore_run(28.0)], "all": [_restore_run(None)]})

    assert section["modes"]["standbys"]["value"] == 28.0
    assert section["modes"]["standbys"]["met"] is True
    assert "did not pass or were not measured" in section["modes"]["all"]["error"]
    tick = section["watchdog_tick_seconds"]
    assert (tick["value"], tick["worst_case_seconds"]) == (3.2, {"rate 1 min": 63.2, "rate 5 min": 303.2})
    lines = lab_restore.table_lines(section)
    assert lines[0].startswith("Lab restore, standbys (standby-restored, defaults): 28.0 s")
    assert lines[1].startswith("Lab restore, all: error:")
    assert "worst case rate 1 min: 63 s, rate 5 min: 303 s" in lines[2]


def test_the_slurm_triggers_figures_are_checks_against_slurmctld_timeout() -> None:
    run = {**_restore_run(34.3), "run_started_seconds": 13.2, "slurmctld_timeout_seconds": 10}
    section = lab_restore.report({"standbys": [_restore_run(28.0)]}, [run])
    trigger = section["slurm_trigger"]
    assert (trigger["run_start"]["value"], trigger["run_start"]["target"], trigger["run_start"]["met"]) == (
        13.2,
        40,
        True,
    )
    assert (trigger["healthy"]["value"], trigger["healthy"]["target"]) == (34.3, 60)
    line = lab_restore.table_lines(section)[-1]
    assert line.startswith("Lab Slurm trigger, a dead standby (standby-trigger-restored, no tick): ")
    assert "the run started 13.2 s after the fault (target <= 40 s" in line
    unmeasured = lab_restore.report({}, [{**run, "run_started_seconds": None}])["slurm_trigger"]
    assert "did not pass or were not measured" in unmeasured["error"]
    assert "slurm_trigger" not in lab_restore.report({"standbys": [_restore_run(28.0)]})
