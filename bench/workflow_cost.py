"""State transitions, Lambda invocations and the AWS price of one verification run.

Each scenario runs through the lead's scenario engine by its command-line contract
(``hyperpod-ha simulate <scenario> --json``, called in process) in a fresh interpreter, so
its moto state and threads stay out of the other measurements. Two hooks watch it:
moto's Lambda invoke (which the state machine's tasks go through) counts invocations and
times them, and the end of the outermost moto mock collects every execution's history
before moto resets. When ``hyperpod_ha_dev.simulation`` is not there, the measurement says so.

Prices are public us-east-1 list prices (free tiers ignored), see :data:`PRICES`.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import util as importlib_util
from pathlib import Path
from typing import Any, Final

from bench import ROOT
from bench.lambda_functions import template_functions
from hyperpod_ha_dev.embedded import delivery

SCENARIOS: Final = ("failover", "both-down")
SCENARIO_TIMEOUT_SECONDS: Final = 240.0
# The keys ``hyperpod-ha simulate --json`` promises (design.md, contract).
CONTRACT_KEYS: Final = frozenset({"scenario", "verdict", "incidents", "snapshots", "executions"})


@dataclass(frozen=True)
class Prices:
    region: str
    step_functions_per_1000_transitions: float
    lambda_arm64_per_gb_second: float
    lambda_per_million_requests: float
    consulted: str
    sources: tuple[Mapping[str, str], ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "region": self.region,
            "step_functions_per_1000_state_transitions_usd": self.step_functions_per_1000_transitions,
            "lambda_arm64_per_gb_second_usd": self.lambda_arm64_per_gb_second,
            "lambda_per_million_requests_usd": self.lambda_per_million_requests,
            "free_tiers": "ignored (4,000 transitions, 1M requests and 400,000 GB-s a month)",
            "consulted": self.consulted,
            "sources": [dict(source) for source in self.sources],
        }


PRICES: Final = Prices(
    region="us-east-1",
    step_functions_per_1000_transitions=0.025,
    lambda_arm64_per_gb_second=0.0000133334,
    lambda_per_million_requests=0.20,
    consulted="2026-11-30",
    sources=(
        {
            "url": "https://aws.amazon.com/step-functions/pricing/",
            "figure": "Standard Workflows, US East (N. Virginia): $0.0250 per 1,000 state transitions; "
            "each retry is charged as an additional state transition",
        },
        {
            "url": "https://aws.amazon.com/lambda/pricing/",
            "figure": "Arm, first tier (7.5 billion GB-s a month): $0.0000133334 per GB-second "
            "(= $0.0000000133 per ms at 1024 MB); requests $0.20 per 1M. The stored copy of the "
            "official page does not render its price tables; the figures as quoted for US East "
            "(N. Virginia) by https://cloudchipr.com/blog/aws-lambda-pricing",
        },
        {
            "url": "https://aws.amazon.com/blogs/compute/aws-lambda-standardizes-billing-for-init-phase/",
            "figure": "since 2025-08-01 the INIT phase (cold start) of ZIP functions on managed runtimes is "
            "billed as duration too; not included here (see the cold-start measurement)",
        },
    ),
)


def count_transitions(events: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Billed state transitions in one execution's history: every state entered (inline Map
    iterations' states included), plus one per retry of a task (a task scheduled again
    within the same state entry)."""
    types = Counter(str(event.get("type", "")) for event in events)
    entered = sum(count for kind, count in types.items() if kind.endswith("StateEntered"))
    task_entries = types["TaskStateEntered"]
    scheduled = types["TaskScheduled"] + types["LambdaFunctionScheduled"] + types["ActivityScheduled"]
    retries = max(0, scheduled - task_entries)
    return {"states_entered": entered, "task_retries": retries, "transitions": entered + retries}


def states_entered(events: Iterable[Mapping[str, Any]]) -> Counter[str]:
    """How often each state was entered (where the transitions go)."""
    return Counter(
        str(event.get("state")) for event in events if str(event.get("type", "")).endswith("StateEntered")
    )


def loop_note(by_state: Mapping[str, float], transitions: float) -> str:
    """Name the states entered most often when a few of them make most of the transitions."""
    top = sorted(by_state.items(), key=lambda item: item[1], reverse=True)[:3]
    share = sum(count for _, count in top) / transitions if transitions else 0.0
    if share < 0.5 or top[0][1] < 3:
        return ""
    described = ", ".join(f"'{name}' {count:g}" for name, count in top)
    return (
        f"{share:.0%} of the transitions are the states entered most often ({described} per run): "
        "a polling loop; a longer wait between polls, or fewer polls, is where the cost goes down."
    )


def lambda_tasks(events: Iterable[Mapping[str, Any]]) -> int:
    """Lambda invocations the state machine made, from its history."""
    count = 0
    for event in events:
        kind = event.get("type")
        if kind == "LambdaFunctionScheduled" or (
            kind == "TaskScheduled" and event.get("resource_type") == "lambda"
        ):
            count += 1
    return count


def price_of_run(
    transitions: float, invocations: Sequence[tuple[int, float]], prices: Prices = PRICES
) -> dict[str, float]:
    """USD for one run: ``invocations`` are (memory MB, billed ms) pairs; ms round up (1 ms billing)."""
    gb_seconds = sum(memory / 1024 * math.ceil(ms) / 1000 for memory, ms in invocations)
    step_functions = transitions * prices.step_functions_per_1000_transitions / 1000
    requests = len(invocations) * prices.lambda_per_million_requests / 1_000_000
    duration = gb_seconds * prices.lambda_arm64_per_gb_second
    return {
        "step_functions": step_functions,
        "lambda_requests": requests,
        "lambda_duration": duration,
        "lambda_gb_seconds": gb_seconds,
        "total": step_functions + requests + duration,
    }


def find_result_object(text: str, required: Iterable[str] = CONTRACT_KEYS) -> dict[str, Any] | None:
    """The last JSON object in ``text`` holding every ``required`` key (log lines may surround it)."""
    decoder = json.JSONDecoder()
    wanted = set(required)
    found: dict[str, Any] | None = None
    index = text.find("{")
    while index != -1:
        try:
            value, end = decoder.raw_decode(text, index)
        except ValueError:
            index = text.find("{", index + 1)
            continue
        if isinstance(value, dict) and wanted <= value.keys():
            found = value
        index = text.find("{", end)
    return found


def unavailable() -> str | None:
    """Why the scenario engine cannot run here, or None."""
    for module in ("hyperpod_ha_dev.simulation", "hyperpod_ha_dev.cli.simulate"):
        try:
            if importlib_util.find_spec(module) is None:
                return (
                    "simulation not available" if module.endswith("simulation") else f"{module} not available"
                )
        except ImportError as error:
            return f"{module} does not import: {error}"
    return None


# ------------------------------------------------------------------ in the scenario's process


def _plain(value: Any) -> str:
    """moto's parser keeps enum members where the API has their string values."""
    return str(getattr(value, "value", value))


def _harvest_histories() -> dict[str, dict[str, Any]]:
    """Every execution moto knows, with its history (only what pricing needs)."""
    histories: dict[str, dict[str, Any]] = {}
    backends: list[Any] = []
    with contextlib.suppress(ImportError):
        parser_models = importlib.import_module("moto.stepfunctions.parser.models")
        backends.append(parser_models.stepfunctions_parser_backends)
    for backend_dict in backends:
        for regions in list(backend_dict.values()):
            for backend in list(regions.values()):
                for machine in list(backend.state_machines):
                    for execution in list(machine.executions):
                        events = execution.to_history_output().get("events", [])
                        histories[str(execution.exec_arn)] = {
                            "status": _plain(execution.exec_status),
                            "events": [
                                {
                                    "type": _plain(event.get("type")),
                                    "state": (event.get("stateEnteredEventDetails") or {}).get("name"),
                                    "resource_type": _plain(
                                        (event.get("taskScheduledEventDetails") or {}).get("resourceType")
                                    ),
                                }
                                for event in events
                            ],
                        }
    return histories


def _watch_lambda(invocations: list[dict[str, Any]]) -> None:
    """Time every handler the embedded stack runs: the state machine's tasks (moto's Lambda
    invoke, routed to the handlers) and the trigger's deliveries (SNS, EventBridge) all go
    through ``delivery``'s module-level ``invoke``."""
    original: Callable[..., Any] = vars(delivery)["invoke"]

    def timed(spec: Any, event: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(spec, event)
        finally:
            invocations.append({"function": spec.logical_id, "ms": 1000 * (time.perf_counter() - started)})

    setattr(delivery, "invoke", timed)  # noqa: B010 - the module global the routing calls


def _keep_histories(histories: dict[str, dict[str, Any]]) -> None:
    """Collect the executions' histories when the outermost moto mock ends, before moto resets."""
    mock = importlib.import_module("moto.core.models").MockAWS
    stop = mock.stop

    def harvesting_stop(self: Any, remove_data: bool = True) -> None:
        if mock._nested_count == 1:
            histories.update(_harvest_histories())
        stop(self, remove_data)

    mock.stop = harvesting_stop


def _simulate(scenario: str) -> tuple[int, dict[str, Any] | None]:
    """One scenario through hyperpod_ha_dev.simulation; through its CLI contract if the engine's API moved."""
    try:
        run = importlib.import_module("hyperpod_ha_dev.simulation.engine").run_scenario
        known = importlib.import_module("hyperpod_ha_dev.simulation.scenarios").SCENARIOS
    except (ImportError, AttributeError):
        return _simulate_by_cli(scenario)
    if scenario not in known:
        raise KeyError(f"scenario {scenario!r} is not one of {sorted(known)}")
    result = run(known[scenario], ROOT)
    return (0 if result.passed else 1), result.to_json()


def _simulate_by_cli(scenario: str) -> tuple[int, dict[str, Any] | None]:
    main = importlib.import_module("hyperpod_ha_cli.main").main
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        try:
            exit_code = main(["simulate", scenario, "--json"])
        except SystemExit as exited:
            exit_code = exited.code if isinstance(exited.code, int) else 1
    return exit_code, find_result_object(captured.getvalue())


def run_scenario_here(scenario: str) -> dict[str, Any]:
    """Run one scenario in this process with the hooks in place; call in a fresh interpreter."""
    invocations: list[dict[str, Any]] = []
    histories: dict[str, dict[str, Any]] = {}
    _watch_lambda(invocations)
    _keep_histories(histories)
    exit_code, result = _simulate(scenario)
    return {"exit_code": exit_code, "result": result, "histories": histories, "invocations": invocations}


# ------------------------------------------------------------------ in the bench's process


def _run_in_fresh_process(scenario: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-scenario-") as directory:
        output = Path(directory) / "scenario.json"
        done = subprocess.run(
            [sys.executable, "-m", "bench.workflow_cost", scenario, str(output)],
            cwd=ROOT,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            capture_output=True,
            text=True,
            timeout=SCENARIO_TIMEOUT_SECONDS,
            check=False,
        )
        if done.returncode != 0 or not output.exists():
            tail = " | ".join(done.stderr.strip().splitlines()[-3:])
            raise RuntimeError(f"scenario {scenario} failed (exit {done.returncode}): {tail}")
        loaded: dict[str, Any] = json.loads(output.read_text())
        return loaded


def scenario_report(
    raw: Mapping[str, Any], memory_mb: Mapping[str, int], timeout_s: Mapping[str, int]
) -> dict[str, Any]:
    histories: Mapping[str, Any] = raw["histories"]
    if not histories:
        return {
            "error": "the scenario left no Step Functions execution to measure",
            "result": raw.get("result"),
        }
    runs = len(histories)
    counted = [count_transitions(history["events"]) for history in histories.values()]
    transitions = sum(item["transitions"] for item in counted) / runs
    scheduled = sum(lambda_tasks(history["events"]) for history in histories.values()) / runs
    # Every handler run in the scenario: the workflow's tasks and the trigger's invocations.
    handled = [item for item in raw["invocations"] if item["function"] in memory_mb]
    measured = [(memory_mb[item["function"]], float(item["ms"])) for item in handled]
    at_timeouts = [(memory_mb[item["function"]], 1000.0 * timeout_s[item["function"]]) for item in handled]
    per_run_measured = {
        key: value / runs for key, value in price_of_run(transitions * runs, measured).items()
    }
    per_run_ceiling = {
        key: value / runs for key, value in price_of_run(transitions * runs, at_timeouts).items()
    }
    result = raw.get("result") or {}
    by_state: Counter[str] = Counter()
    for history in histories.values():
        by_state.update(states_entered(history["events"]))
    per_run_by_state = {name: round(count / runs, 1) for name, count in by_state.most_common()}
    notes = [
        loop_note(per_run_by_state, transitions),
        "The price counts every Lambda invocation of the scenario, the trigger's included. Durations "
        "are measured in process on moto, where SSM answers at once: a lower bound for the health "
        "checks, which wait for Session Manager on AWS. The ceiling prices every invocation at its "
        "function's Timeout. DynamoDB, SNS, SSM, FSx and CloudWatch charges are not included.",
    ]
    return {
        "verdict": result.get("verdict"),
        # The scenario engine's own judgement (verdict, incidents, snapshots as it expects them).
        "scenario_passed": result.get("passed", raw.get("exit_code") == 0),
        "executions": runs,
        "statuses": dict(Counter(history["status"] for history in histories.values())),
        "state_transitions_per_run": round(transitions, 1),
        "task_retries_per_run": round(sum(item["task_retries"] for item in counted) / runs, 1),
        # The state machine's Lambda tasks (retries included), from its history.
        "lambda_invocations_per_run": round(scheduled, 1),
        # Every invocation seen, the trigger's too (priced below).
        "invocations_by_function": dict(sorted(Counter(item["function"] for item in handled).items())),
        "invocations_priced_per_run": round(len(handled) / runs, 1),
        "states_entered_per_run": per_run_by_state,
        "price_per_run_usd": {
            "step_functions": round(per_run_measured["step_functions"], 7),
            "lambda_requests": round(per_run_measured["lambda_requests"], 7),
            "lambda_duration_measured": round(per_run_measured["lambda_duration"], 9),
            "lambda_duration_at_timeouts": round(per_run_ceiling["lambda_duration"], 7),
            "total_measured": round(per_run_measured["total"], 7),
            "total_ceiling": round(per_run_ceiling["total"], 7),
        },
        "note": " ".join(note for note in notes if note),
    }


def measure(scenarios: Sequence[str] = SCENARIOS) -> dict[str, Any]:
    reason = unavailable()
    if reason is not None:
        return {"skipped": reason}
    functions = template_functions(ROOT)
    memory_mb = {function.logical_id: function.memory_mb for function in functions}
    timeout_s = {function.logical_id: function.timeout_seconds for function in functions}
    report: dict[str, Any] = {"prices": PRICES.to_json(), "scenarios": {}}
    for scenario in scenarios:
        try:
            report["scenarios"][scenario] = scenario_report(
                _run_in_fresh_process(scenario), memory_mb, timeout_s
            )
        except (RuntimeError, subprocess.TimeoutExpired, KeyError, ValueError) as error:
            report["scenarios"][scenario] = {"error": f"{type(error).__name__}: {error}"}
    return report


def _main(argv: Sequence[str]) -> int:
    scenario, output = argv
    Path(output).write_text(json.dumps(run_scenario_here(scenario), default=str))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
