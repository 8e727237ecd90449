"""The benchmark's own logic: medians and ratios, parsing, event mixes, pricing, the results' shape.

Nothing here is timed; the measurements themselves run with ``make bench``.
"""

from __future__ import annotations

import copy
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bench import ROOT
from bench.__main__ import build_stale
from bench.cold_start import ImportLine, parse_importtime, top_imports
from bench.lab_verdict import LabRun, target_seconds
from bench.lab_verdict import report as lab_report
from bench.lambda_functions import layer_ids, placeholder_parameters, template_functions
from bench.package_size import extension_architectures, runtime_provided, zipped_size
from bench.report import assemble, checks, errors, format_table, problems
from bench.stats import NoSamples, at_most, human_bytes, median, median_ratio, ratio
from bench.storm import (
    CONTROLLER,
    NODE_MIX,
    WORKERS,
    node_event_plan,
    node_writes_note,
    sns_plan,
    sns_writes_note,
    tables_of,
)
from bench.watchdog_cost import cost_report, price_per_month, ticks_per_month
from bench.workflow_cost import (
    PRICES,
    count_transitions,
    find_result_object,
    lambda_tasks,
    loop_note,
    price_of_run,
    states_entered,
)
from hyperpod_ha_dev.embedded.cfn import load_template

EVENTS = ROOT / "events"


def _event(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EVENTS / name).read_text())
    return loaded


# --- stats ---------------------------------------------------------------------------------


def test_median_and_ratio_of_medians() -> None:
    assert median([5.0, 1.0, 3.0]) == 3.0
    assert median([1.0, 2.0, 3.0, 10.0]) == 2.5
    # Not the median of paired ratios: the runs are interleaved, not paired.
    assert median_ratio([300.0, 310.0, 900.0], [200.0, 100.0, 200.0]) == 1.55
    assert ratio(1.0, 3.0) == 0.33


def test_no_samples_or_no_baseline_is_an_error() -> None:
    with pytest.raises(NoSamples):
        median([])
    with pytest.raises(NoSamples):
        ratio(1.0, 0.0)


def test_a_check_says_whether_its_target_is_met() -> None:
    assert at_most(1.3, 1.3) == {"value": 1.3, "target": 1.3, "met": True}
    missed = at_most(2.0, 1.3, "too slow", samples=7)
    assert missed == {"value": 2.0, "target": 1.3, "met": False, "note": "too slow", "samples": 7}


def test_sizes_read_in_binary_units() -> None:
    assert human_bytes(100) == "100 B"
    assert human_bytes(1536) == "1.5 KiB"
    assert human_bytes(15 * 1024 * 1024) == "15.0 MiB"


# --- cold start ------------------------------------------------------------------------------

IMPORTTIME = """\
import time: self [us] | cumulative | imported package
import time:       120 |        120 |   _io
import time:      3000 |      90000 | app
import time:       500 |      60000 |   hyperpod_ha.observability
import time:     40000 |      59500 |     aws_xray_sdk.core
something else on stderr
"""


def test_importtime_lines_are_parsed_with_their_depth() -> None:
    lines = parse_importtime(IMPORTTIME)

    assert lines == [
        ImportLine("_io", 120, 120, 1),
        ImportLine("app", 3000, 90000, 0),
        ImportLine("hyperpod_ha.observability", 500, 60000, 1),
        ImportLine("aws_xray_sdk.core", 40000, 59500, 2),
    ]


def test_top_imports_rank_by_median_cumulative_time() -> None:
    fast = parse_importtime(IMPORTTIME.replace("90000 | app", "80000 | app").replace("59500 |", "70000 |"))
    slow = parse_importtime(IMPORTTIME.replace("59500 |", "99500 |"))

    ranked = top_imports([parse_importtime(IMPORTTIME), fast, slow], count=2)

    # aws_xray_sdk.core: 59.5, 70 and 99.5 ms, median 70, above the observability module's 60.
    assert [item["module"] for item in ranked] == ["app", "aws_xray_sdk.core"]
    assert ranked[0]["cumulative_ms"] == 90.0  # median of 90, 80, 90 ms
    assert ranked[1] == {"module": "aws_xray_sdk.core", "cumulative_ms": 70.0, "self_ms": 40.0, "depth": 2}


def test_every_template_function_is_measured_with_its_environment() -> None:
    template = load_template(ROOT / "template.yaml")
    declared = {
        name
        for name, resource in template["Resources"].items()
        if resource["Type"] == "AWS::Serverless::Function"
    }

    functions = {function.logical_id: function for function in template_functions(ROOT)}

    assert set(functions) == declared
    for function in functions.values():
        assert all(isinstance(value, str) for value in function.environment.values())
        assert function.environment["POWERTOOLS_SERVICE_NAME"] == "hyperpod-ha"  # Globals merged
        assert function.module == "app"
    node_event = functions["NodeEventFunction"].environment
    assert node_event["NOTIFICATION_TOPIC_ARN"].startswith("arn:aws:sns:us-east-1:")
    assert node_event["STATE_TABLE"].endswith("-StateTable")
    assert layer_ids(ROOT) == ["HyperpodHaLayer"]


def test_parameters_without_default_get_placeholders_of_their_type() -> None:
    template = {
        "Parameters": {
            "ClusterName": {"Type": "String"},
            "Subnets": {"Type": "List<AWS::EC2::Subnet::Id>"},
            "Port": {"Type": "Number"},
            "Other": {"Type": "String"},
            "Level": {"Type": "String", "Default": "INFO"},
        }
    }

    values = placeholder_parameters(template)

    assert values == {
        "ClusterName": "ml-cluster",
        "Subnets": ["placeholder-subnets"],
        "Port": 0,
        "Other": "placeholder-other",
        "Level": "INFO",
    }


# --- package size ----------------------------------------------------------------------------


def test_what_the_runtime_provides_is_recognised() -> None:
    names = [
        "boto3",
        "botocore-1.43.0.dist-info",
        "six.py",
        "dateutil",
        "aws_lambda_powertools",
        "sixer",
        "pymysql",
    ]

    assert runtime_provided(names) == ["boto3", "botocore-1.43.0.dist-info", "dateutil", "six.py"]


def test_extension_architectures_are_read_from_their_names() -> None:
    paths = [
        Path("wrapt/_wrappers.cpython-313-aarch64-linux-gnu.so"),
        Path("speedups.cpython-313-x86_64-linux-gnu.so"),
        Path("odd.so"),
        Path("module.py"),
    ]

    assert extension_architectures(paths) == {
        "_wrappers.cpython-313-aarch64-linux-gnu.so": "aarch64",
        "speedups.cpython-313-x86_64-linux-gnu.so": "x86_64",
        "odd.so": "unknown",
    }


def test_the_zip_is_deflated_and_holds_every_file(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "app.py").write_text("x = 1\n" * 2000)
    one_file = zipped_size(tmp_path)
    (tmp_path / "pkg" / "data.json").write_text(json.dumps({"key": list(range(500))}))

    assert 0 < one_file < 2000 * len("x = 1\n") / 10  # deflated
    assert zipped_size(tmp_path) > one_file + 100


def test_a_build_older_than_its_sources_is_stale(tmp_path: Path) -> None:
    for relative in ("template.yaml", "functions/a/app.py", "layers/hyperpod_ha/x.py", "build/template.yaml"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("x")
    os.utime(tmp_path / "build" / "template.yaml", (1_000_000, 2_000_000))
    assert build_stale(tmp_path / "build", tmp_path)
    os.utime(tmp_path / "build" / "template.yaml")
    assert not build_stale(tmp_path / "build", tmp_path)
    assert build_stale(tmp_path / "missing", tmp_path)


# --- storm -----------------------------------------------------------------------------------


@pytest.fixture
def node_plan() -> list[Any]:
    return node_event_plan(
        4000,
        8,
        _event("eventbridge_node_health_worker.json"),
        _event("eventbridge_node_health_controller.json"),
    )


def test_the_node_event_mix_is_mostly_unhealthy_workers(node_plan: list[Any]) -> None:
    kinds = Counter(item.kind for item in node_plan)

    assert sum(kinds.values()) == 4000
    for kind, share in NODE_MIX:
        assert abs(kinds[kind] / 4000 - share) < 0.02, kind
    workers = {item.event["detail"]["InstanceId"] for item in node_plan if item.kind.startswith("worker")}
    assert workers == {f"i-0f0f0f0f0f0f{index:05d}" for index in range(1, WORKERS + 1)}
    controllers = [item for item in node_plan if item.kind == "controller-unhealthy"]
    assert {item.event["detail"]["InstanceId"] for item in controllers} == {CONTROLLER}
    healthy = [item for item in node_plan if item.kind == "worker-healthy"]
    assert {item.event["detail"]["HealthSummary"]["HealthStatus"] for item in healthy} == {"Healthy"}


def test_redeliveries_repeat_an_earlier_event_and_its_id(node_plan: list[Any]) -> None:
    seen: dict[str, dict[str, Any]] = {}
    for item in node_plan:
        if item.kind == "redelivery":
            assert seen[item.event["id"]] == item.event
            assert item.redelivery_of in {"worker-unhealthy", "worker-healthy", "controller-unhealthy"}
        else:
            assert item.event["id"] not in seen
            seen[item.event["id"]] = copy.deepcopy(dict(item.event))


def test_plans_are_the_same_for_the_same_seed() -> None:
    worker, controller = (
        _event("eventbridge_node_health_worker.json"),
        _event("eventbridge_node_health_controller.json"),
    )

    assert node_event_plan(300, 1, worker, controller) == node_event_plan(300, 1, worker, controller)
    assert node_event_plan(300, 1, worker, controller) != node_event_plan(300, 2, worker, controller)


def test_sns_redeliveries_keep_their_message_id() -> None:
    plan = sns_plan(500, 8, _event("sns_controller_on_primary.json"))

    fresh = [item.event["Records"][0]["Sns"]["MessageId"] for item in plan if item.kind == "notification"]
    again = [item.event["Records"][0]["Sns"]["MessageId"] for item in plan if item.kind == "redelivery"]
    assert len(fresh) == len(set(fresh))
    assert again
    assert set(again) <= set(fresh)
    messages = {item.event["Records"][0]["Sns"]["Message"] for item in plan}
    assert "Slurm Controller is ON, (10.1.0.12, Primary Node)" in messages


def test_writes_are_attributed_to_their_tables() -> None:
    assert tables_of("PutItem", {"TableName": "state"}) == ["state"]
    assert tables_of("BatchWriteItem", {"RequestItems": {"b": [], "a": []}}) == ["a", "b"]
    transaction = {"TransactItems": [{"Put": {"TableName": "x"}}, {"Update": {"TableName": "y"}}]}
    assert tables_of("TransactWriteItems", transaction) == ["x", "y"]


def _phase(
    calls_per_table: dict[str, dict[str, int]], events: int, per_kind: dict[str, Any]
) -> dict[str, Any]:
    calls = sum(sum(actions.values()) for actions in calls_per_table.values())
    return {
        "events": events,
        "dynamodb_writes": at_most(
            round(calls / events, 3), 1.0, calls=calls, per_table=calls_per_table, per_kind=per_kind
        ),
    }


def test_the_node_note_names_the_kinds_that_cost_more_than_one_write() -> None:
    report = _phase(
        {"StateTable": {"PutItem": 20, "UpdateItem": 980}},
        1000,
        {
            "worker-unhealthy": {"UpdateItem": 1.0},
            "controller-unhealthy": {"PutItem": 1.0, "UpdateItem": 0.95},
        },
    )

    note = node_writes_note(report)

    assert note.startswith("Met on average (1.0 write calls per event)")
    assert "controller-unhealthy 1.95" in note
    assert "worker-unhealthy" not in note
    assert (
        node_writes_note(_phase({"StateTable": {"UpdateItem": 10}}, 10, {"worker": {"UpdateItem": 1.0}}))
        == ""
    )


def test_the_sns_note_splits_idempotency_from_lease_writes() -> None:
    report = _phase(
        {
            "IdempotencyTable": {"PutItem": 200, "UpdateItem": 160},
            "StateTable": {"PutItem": 160, "UpdateItem": 160},
        },
        200,
        {},
    )

    note = sns_writes_note(report, "IdempotencyTable")

    assert note.startswith("Target missed for SNS, by design: of 3.4 write calls per notification, 1.80")
    assert "and 1.60 to the state table" in note


# --- workflow cost ---------------------------------------------------------------------------


def test_transitions_count_every_state_entered_and_every_retry() -> None:
    history = [
        {"type": "ExecutionStarted"},
        {"type": "ChoiceStateEntered"},
        {"type": "TaskStateEntered"},
        {"type": "TaskScheduled", "resource_type": "lambda"},
        {"type": "TaskFailed"},
        {"type": "TaskScheduled", "resource_type": "lambda"},  # Retry
        {"type": "TaskSucceeded"},
        {"type": "MapStateEntered"},
        {"type": "MapIterationStarted"},
        {"type": "TaskStateEntered"},
        {"type": "TaskScheduled", "resource_type": "lambda"},
        {"type": "TaskStateEntered"},
        {"type": "TaskScheduled", "resource_type": "dynamodb"},
        {"type": "SucceedStateEntered"},
        {"type": "ExecutionSucceeded"},
    ]

    assert count_transitions(history) == {"states_entered": 6, "task_retries": 1, "transitions": 7}
    assert lambda_tasks(history) == 3


def test_a_polling_loop_that_makes_most_transitions_is_named() -> None:
    history = (
        [{"type": "TaskStateEntered", "state": "Check the snapshot"}] * 60
        + [{"type": "WaitStateEntered", "state": "Wait for the snapshot"}] * 60
        + [{"type": "ChoiceStateEntered", "state": "Check the request"}, {"type": "TaskScheduled"}]
    )

    by_state = states_entered(history)

    assert by_state == Counter(
        {"Check the snapshot": 60, "Wait for the snapshot": 60, "Check the request": 1}
    )
    note = loop_note(by_state, 121)
    assert note.startswith(
        "100% of the transitions are the states entered most often ('Check the snapshot' 60,"
    )
    assert loop_note(Counter({"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1, "g": 1}), 7) == ""


def test_the_price_of_a_run_uses_the_published_unit_prices() -> None:
    price = price_of_run(1000, [(256, 999.2), (1024, 1.0)])

    assert price["step_functions"] == pytest.approx(0.025)
    assert price["lambda_requests"] == pytest.approx(2 * 0.20 / 1_000_000)
    # 256 MB for 1 s (rounded up to the ms) and 1024 MB for 1 ms.
    assert price["lambda_gb_seconds"] == pytest.approx(0.25 + 0.001)
    assert price["lambda_duration"] == pytest.approx(0.251 * 0.0000133334)
    assert price["total"] == pytest.approx(
        price["step_functions"] + price["lambda_requests"] + price["lambda_duration"]
    )
    assert PRICES.region == "us-east-1"
    assert all(source["url"].startswith("https://aws.amazon.com/") for source in PRICES.sources)


def test_the_scenario_result_is_found_among_log_lines() -> None:
    result = {
        "scenario": "failover",
        "verdict": "FAILED_OVER",
        "incidents": [],
        "snapshots": [{"id": "b-1"}],
        "executions": 1,
    }
    text = "\n".join(
        [
            '{"level": "INFO", "message": "controller checked", "scenario": "not this one"}',
            "plain text {not json",
            json.dumps(result, indent=2),
            '{"level": "INFO", "message": "after"}',
        ]
    )

    assert find_result_object(text) == result
    assert find_result_object('{"level": "INFO"}') is None


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
            "NodeEventFunction": at_most(1.2, 1.3, wall_ms_median=240.0),
            "IncidentFunction": at_most(1.6, 1.3, "compile the layer", wall_ms_median=320.0),
        },
    }
    package = {
        "functions": {
            "NodeEventFunction": at_most(2100, 102400, unit="bytes zipped"),
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

    node = results["functions"]["NodeEventFunction"]
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
    results["functions"]["NodeEventFunction"]["cold_start"]["met"] = False
    del results["lab_verdict"]
    results["layers"]["HyperpodHaLayer"].pop("target")

    assert problems(results) == [
        "section lab_verdict is missing",
        "functions.NodeEventFunction.cold_start: met does not follow from value and target",
        "layers.HyperpodHaLayer: check without target",
    ]


def test_the_table_shows_figures_misses_and_skips() -> None:
    table = format_table(_results())

    assert "NodeEventFunction                1.20     240    yes     2.1 KiB    yes" in table
    assert "IncidentFunction                 1.60     320 MISSED   error" in table
    assert "Layer HyperpodHaLayer: 8.2 MiB unzipped (target 15.0 MiB) yes" in table
    assert "Workflow cost: skipped: simulation not available" in table
    assert "Watchdog cost: skipped: the template has no WatchdogFunction" in table
    assert "Lab time to verdict: skipped: the Slurm lab needs root" in table
    assert table.endswith("1 target(s) missed: functions.IncidentFunction.cold_start")


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
    from hyperpod_ha.ingestion import MAX_KEPT_BYTES, RejectedInputs

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


def _tick(ms: float, outcome: str = "verified") -> dict[str, Any]:
    calls = {"sagemaker.DescribeCluster": 1, "dynamodb.GetItem": 1}
    return {"outcome": outcome, "error": None, "ms": ms, "log_bytes": 800, "calls": calls}


def test_the_watchdog_month_is_priced_from_list_prices() -> None:
    # 8,760 ticks of 2,000 ms at 128 MB: 2,190 GB-s.
    price = price_per_month(8760, 128, 2000.0, {"dynamodb.GetItem": 1.0}, 1000)
    assert price["lambda_duration"] == pytest.approx(2190 * 0.0000133334)
    assert price["lambda_requests"] == pytest.approx(8760 * 0.20 / 1e6)
    assert price["scheduler"] == pytest.approx(8760 * 1.00 / 1e6)
    assert price["xray_traces"] == pytest.approx(8760 * 5.00 / 1e6)
    assert price["dynamodb"] == pytest.approx(8760 * 0.125 / 1e6)
    assert price["logs"] == pytest.approx(8760 * 1000 / 1e9 * 0.50)
    assert price["total"] == pytest.approx(sum(v for k, v in price.items() if k != "total"))
    assert ticks_per_month(5) == 8760
    assert ticks_per_month(0) == 0


def test_the_watchdog_cost_is_a_check_per_cluster_month() -> None:
    report = cost_report({"ticks": [_tick(2500), _tick(2000), _tick(2100)], "executions": 0}, 128, 40, 5)
    assert report["met"] is True
    assert report["tick_ms"] == {"cold": 2500, "warm_median": 2050}
    assert report["aws_calls_per_tick"] == {"dynamodb.GetItem": 1.0, "sagemaker.DescribeCluster": 1.0}
    assert report["value"] == pytest.approx(report["price_per_month_usd"]["total"], abs=1e-4)
    assert report["ceiling_per_month_usd"]["total"] > report["value"]


def test_a_healthy_tick_that_starts_a_run_is_an_error_not_a_price() -> None:
    report = cost_report({"ticks": [_tick(2000, outcome="started")], "executions": 1}, 128, 40, 5)
    assert "error" in report
    assert "1 executions started" in report["error"]
