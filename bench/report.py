"""The results file's shape, its checks, and the short table ``make bench`` prints.

``bench/results.json``::

    {
      "meta": {"generated_at", "python", "machine", "cpus", "build_stale", "seconds", ...},
      "functions": {"<LogicalId>": {"cold_start_ratio": 1.12,
                                    "cold_start": <check>, "package": <check>}},
      "cold_start": {"target", "rounds", "baseline": {...}, "slowest": {"function", "top_imports", ...}},
      "layers": {"<LayerId>": <check, with "boto3_excluded": <check>, ...>},
      "storm": {"node_events": {..., "dynamodb_writes": <check>},
                "sns_notifications": {..., "dynamodb_writes": <check>},
                "executions_started": <check>, "notifications_sent": <check>},
      "input_parsing": {"worst": <check, with "input">, "largest_rejected_body_bytes",
                        "inputs": {"sns/<name>" | "eventbridge/<name>": {"median_ms", ...}},
                        "node_text": {"worst": <check, with "input">, "inputs": {
                            "slurm/<parser>/<shape>" | "probe/..." | "rollout/...": {...}}}},
      "workflow_cost": {"skipped": "..."} | {"prices": {...}, "scenarios": {"failover": {...}, ...}},
      "watchdog_cost": {"skipped": "..."} | <check, USD per cluster-month>,
      "lab_timings": {"skipped": "..."} | {"up_seconds": <check>, "up_again_seconds", "down_seconds",
                      "takeover_seconds", "slurm_build_seconds"},
      "lab_verdict": {"skipped": "..."} | <check>,
      "lab_restore": {"skipped": "..."} | {"modes": {"standbys"|"all": <check>},
                      "watchdog_tick_seconds": <check>,
                      "slurm_trigger": {"run_start": <check>, "healthy": <check>, ...}},
      "lab_chaos": {"skipped": "..."} | <check: pass rules failed, with "command", "table", "summary">,
      "lab_early_warning": {"skipped": "..."} | <check: the lead time, with "accounting", "overload",
                            "probe">,
      "embedded_stack": {"skipped": "..."} | <check, seconds, with "first_seconds", "resources">
    }

A check is ``{"value", "target", "met", "note"?, ...details}``; a measurement that could not
run is ``{"skipped": reason}``, one that broke is ``{"error": reason}``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from bench import lab_restore
from bench.stats import human_bytes

SECTIONS = (
    "meta",
    "functions",
    "cold_start",
    "layers",
    "storm",
    "input_parsing",
    "workflow_cost",
    "watchdog_cost",
    "lab_timings",
    "lab_verdict",
    "lab_restore",
    "lab_chaos",
    "lab_early_warning",
    "embedded_stack",
)


def assemble(meta: Mapping[str, Any], parts: Mapping[str, Any]) -> dict[str, Any]:
    """One results object from the measurements' own results (each possibly an error or a skip)."""
    cold = parts["cold_start"]
    package = parts["package_size"]
    functions: dict[str, Any] = {}
    for name in [*cold.get("functions", {}), *package.get("functions", {})]:
        entry = functions.setdefault(name, {})
        if name in cold.get("functions", {}):
            check = cold["functions"][name]
            if "value" in check:
                entry["cold_start_ratio"] = check["value"]
            entry["cold_start"] = check
        if name in package.get("functions", {}):
            entry["package"] = package["functions"][name]
    cold_summary = {key: value for key, value in cold.items() if key != "functions"}
    layers = package.get(
        "layers", {key: value for key, value in package.items() if key in ("error", "skipped")}
    )
    return {
        "meta": dict(meta),
        "functions": functions,
        "cold_start": cold_summary,
        "layers": layers,
        "storm": parts["storm"],
        "input_parsing": parts.get("input_parsing", {"skipped": "not measured"}),
        "workflow_cost": parts["workflow_cost"],
        "watchdog_cost": parts.get("watchdog_cost", {"skipped": "not measured"}),
        "lab_timings": parts.get("lab_timings", {"skipped": "not measured"}),
        "lab_verdict": parts["lab_verdict"],
        "lab_restore": parts.get("lab_restore", {"skipped": "not measured"}),
        "lab_chaos": parts.get("lab_chaos", {"skipped": "not measured"}),
        "lab_early_warning": parts.get("lab_early_warning", {"skipped": "not measured"}),
        "embedded_stack": parts.get("embedded_stack", {"skipped": "not measured"}),
    }


def checks(node: Any, path: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every check in ``node``, with its path (``functions.HyperPodEventFunction.cold_start``)."""
    if isinstance(node, Mapping):
        if "met" in node:
            yield path, node
        for key, value in node.items():
            yield from checks(value, f"{path}.{key}" if path else str(key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from checks(value, f"{path}[{index}]")


def problems(results: Mapping[str, Any]) -> list[str]:
    """What is wrong with the shape of ``results`` (empty when it is fine)."""
    found = [f"section {name} is missing" for name in SECTIONS if name not in results]
    for path, check in checks(results):
        for key in ("value", "target"):
            if key not in check:
                found.append(f"{path}: check without {key}")
        comparable = "value" in check and "target" in check and isinstance(check["value"], int | float)
        if not isinstance(check["met"], bool):
            found.append(f"{path}: met is not a boolean")
        elif comparable and check["met"] != (check["value"] <= check["target"]):
            found.append(f"{path}: met does not follow from value and target")
        if "note" in check and not isinstance(check["note"], str):
            found.append(f"{path}: note is not text")
    for name in SECTIONS[1:]:
        section = results.get(name)
        if isinstance(section, Mapping) and "skipped" in section and not isinstance(section["skipped"], str):
            found.append(f"{name}: skipped without a reason")
    return found


def errors(results: Mapping[str, Any]) -> list[str]:
    """Measurements that broke (not missed targets: those are results)."""
    found = []

    def walk(node: Any, path: str) -> None:
        if isinstance(node, Mapping):
            if "error" in node and isinstance(node["error"], str):
                found.append(f"{path}: {node['error']}")
            for key, value in node.items():
                walk(value, f"{path}.{key}" if path else str(key))

    walk(results, "")
    return found


def _mark(check: Mapping[str, Any]) -> str:
    return "yes" if check.get("met") else "MISSED"


def _status(section: Any) -> str | None:
    if not isinstance(section, Mapping):
        return "no result"
    if "skipped" in section:
        return f"skipped: {section['skipped']}"
    if "error" in section:
        return f"error: {section['error']}"
    return None


def _cold_start_lines(results: Mapping[str, Any]) -> list[str]:
    cold = results.get("cold_start", {})
    baseline = cold.get("baseline", {})
    lines = [
        f"Cold start: median of {cold.get('rounds', '?')} fresh processes, ratio to a boto3-only process "
        f"({baseline.get('wall_ms_median', '?')} ms); target <= {cold.get('target', '?')}; own code zipped",
        f"  {'function':30} {'ratio':>6} {'ms':>7} {'met':>6}   {'zipped':>9} {'met':>6}",
    ]
    for name, entry in results.get("functions", {}).items():
        start = entry.get("cold_start", {})
        package = entry.get("package", {})
        if "value" in start:
            ratio_text = f"{start['value']:>6.2f} {start['wall_ms_median']:>7.0f} {_mark(start):>6}"
        else:
            ratio_text = f"{'error':>6} {'':>7} {'':>6}"
        size_text = (
            f"{human_bytes(package['value']):>9} {_mark(package):>6}" if "value" in package else "error"
        )
        lines.append(f"  {name:30} {ratio_text}   {size_text}")
    status = _status(cold)
    if status and not results.get("functions"):
        lines.append(f"  {status}")
    slowest = cold.get("slowest")
    if slowest:
        lines.append(
            f"  slowest: {slowest['function']}, {slowest['with_compiled_layer_ratio']}x with the layer "
            "compiled to .pyc; its imports beyond boto3 (median cumulative ms, own ms):"
        )
        for item in slowest["top_beyond_baseline"]:
            depth = min(item["depth"], 6)
            lines.append(
                f"    {'  ' * depth}{item['module']:<{52 - 2 * depth}} "
                f"{item['cumulative_ms']:>7.1f} {item['self_ms']:>7.1f}"
            )
    return lines


def _layer_lines(results: Mapping[str, Any]) -> list[str]:
    lines = []
    for name, layer in results.get("layers", {}).items():
        if not (isinstance(layer, Mapping) and "value" in layer):
            lines.append(f"Layer {name}: {_status(layer)}")
            continue
        arm64 = "yes" if layer["all_extensions_arm64"] else "NO"
        lines.append(
            f"Layer {name}: {human_bytes(layer['value'])} unzipped (target {human_bytes(layer['target'])}) "
            f"{_mark(layer)}; zipped {human_bytes(layer['zipped_bytes'])}; boto3 excluded "
            f"{_mark(layer['boto3_excluded'])}; extensions arm64 {arm64}"
        )
    return lines


def _storm_lines(storm: Mapping[str, Any]) -> list[str]:
    status = _status(storm)
    if status:
        return [f"Event storm: {status}"]
    lines = []
    for key, label in (("node_events", "node events"), ("sns_notifications", "SNS notifications")):
        phase = storm[key]
        writes = phase["dynamodb_writes"]
        lines.append(
            f"Event storm, {phase['events']} {label}: {phase['events_per_second']:.0f}/s in process "
            f"({phase['event_cost_in_put_items']}x a moto PutItem); DynamoDB writes per event "
            f"{writes['value']:.2f} (target <= {writes['target']:g}) {_mark(writes)}"
        )
    runs, notices = storm["executions_started"], storm["notifications_sent"]
    lines.append(
        f"  executions started {runs['value']} (target <= {runs['target']}) {_mark(runs)}; notices sent "
        f"{notices['value']} (target <= {notices['target']}) {_mark(notices)}"
    )
    return lines


def _input_lines(parsing: Mapping[str, Any]) -> list[str]:
    status = _status(parsing)
    if status:
        return [f"Hostile input: {status}"]
    worst = parsing["worst"]
    return [
        f"Hostile input (SNS/EventBridge payloads up to 1 MiB, {len(parsing['inputs'])} kinds): slowest "
        f"{worst['input']} {worst['value']:.1f} ms parsed or rejected (target <= {worst['target']:g} ms) "
        f"{_mark(worst)}; largest dead-letter body {human_bytes(parsing['largest_rejected_body_bytes'])}",
        *_node_text_lines(parsing.get("node_text", {"skipped": "not measured"})),
    ]


def _node_text_lines(node_text: Mapping[str, Any]) -> list[str]:
    status = _status(node_text)
    if status:
        return [f"Hostile node text: {status}"]
    worst = node_text["worst"]
    return [
        f"Hostile node text (Slurm sections at their cap, probe and roll-out output at 4 MiB, "
        f"{len(node_text['inputs'])} kinds): slowest {worst['input']} {worst['value']:.1f} ms parsed or "
        f"rejected (target <= {worst['target']:g} ms) {_mark(worst)}"
    ]


def _workflow_lines(workflow: Mapping[str, Any]) -> list[str]:
    status = _status(workflow)
    if status:
        return [f"Workflow cost: {status}"]
    lines = []
    for scenario, cost in workflow.get("scenarios", {}).items():
        if "error" in cost:
            lines.append(f"Workflow cost, {scenario}: error: {cost['error']}")
            continue
        price = cost["price_per_run_usd"]
        lines.append(
            f"Workflow cost, {scenario} ({cost['verdict']}): {cost['state_transitions_per_run']:g} "
            f"transitions, {cost['lambda_invocations_per_run']:g} Lambda invocations per run; "
            f"${price['total_measured']:.6f} per run (at most ${price['total_ceiling']:.6f})"
        )
    return lines


def _watchdog_lines(watchdog: Mapping[str, Any]) -> list[str]:
    status = _status(watchdog)
    if status:
        return [f"Watchdog cost: {status}"]
    ceiling = watchdog["ceiling_per_month_usd"]["total"]
    return [
        f"Watchdog cost: ${watchdog['value']:.4f} per cluster-month, a tick every {watchdog['rate_minutes']} "
        f"min ({watchdog['ticks_per_month']} ticks, {watchdog['tick_ms']['cold']:.0f} ms each, "
        f"{watchdog['executions_started']} executions); at most ${ceiling:.4f}; "
        f"target <= ${watchdog['target']:g} {_mark(watchdog)}",
        *_fastest_watchdog_line(watchdog.get("at_fastest_rate")),
    ]


def _fastest_watchdog_line(fastest: Mapping[str, Any] | None) -> list[str]:
    if not fastest:
        return []
    return [
        f"Watchdog cost at a tick every {fastest['rate_minutes']} min: "
        f"${fastest['price_per_month_usd']['total']:.4f} per cluster-month "
        f"({fastest['ticks_per_month']} ticks)"
    ]


def _lab_lines(lab: Mapping[str, Any]) -> list[str]:
    status = _status(lab)
    if status:
        return [f"Lab time to verdict: {status}"]
    lines = []
    for scenario, check in lab.get("scenarios", {}).items():
        if "error" in check:
            lines.append(f"Lab time to verdict, {scenario}: error: {check['error']}")
            continue
        timeout = check["slurmctld_timeout_seconds"]
        lines.append(
            f"Lab time to verdict, {scenario} (defaults): {check['value']} s to the final verdict "
            f"(runs {check['fault_to_verdict_seconds']}); SlurmctldTimeout {timeout} s, "
            f"Slurm {check['slurm_version']}; target <= {check['target']} s {_mark(check)}"
        )
    return lines


def _lab_timing_lines(timings: Mapping[str, Any]) -> list[str]:
    if "skipped" in timings or "error" in timings:
        return [f"Lab timings: {timings.get('skipped') or timings.get('error')}"]
    lines = []
    for name in ("slurm_build_seconds", "up_seconds", "up_again_seconds", "takeover_seconds", "down_seconds"):
        check = timings.get(name)
        if not isinstance(check, Mapping):
            continue
        if "error" in check:
            lines.append(f"Lab {name}: error: {check['error']}")
        else:
            lines.append(
                f"Lab {name} (Slurm {timings.get('slurm')}): {check['value']} s; "
                f"target <= {check['target']} s {_mark(check)}"
            )
    return lines


def _chaos_lines(chaos: Mapping[str, Any]) -> list[str]:
    status = _status(chaos)
    if status:
        return [f"Lab chaos run: {status}"]
    return [
        f"Lab chaos run (`{chaos['command']}`, Slurm {chaos['slurm']}): {chaos['value']} pass rule(s) "
        f"failed; target <= {chaos['target']} {_mark(chaos)}",
        *(f"  {line}" for line in chaos["table"]),
    ]


def _embedded_lines(created: Mapping[str, Any]) -> list[str]:
    status = _status(created)
    if status:
        return [f"Embedded stack: {status}"]
    return [
        f"Embedded stack, {created['resources']} resources: created in {created['value']} s (median of "
        f"{created['rounds']}; the first, translating the template, {created['first_seconds']} s); "
        f"target <= {created['target']:g} s {_mark(created)}"
    ]


def format_table(results: Mapping[str, Any]) -> str:
    missed = [path for path, check in checks(results) if not check["met"]]
    lines = [
        *_cold_start_lines(results),
        *_layer_lines(results),
        *_storm_lines(results.get("storm", {})),
        *_input_lines(results.get("input_parsing", {})),
        *_workflow_lines(results.get("workflow_cost", {})),
        *_watchdog_lines(results.get("watchdog_cost", {})),
        *_lab_timing_lines(results.get("lab_timings", {})),
        *_lab_lines(results.get("lab_verdict", {})),
        *lab_restore.table_lines(results.get("lab_restore", {"skipped": "not measured"})),
        *_chaos_lines(results.get("lab_chaos", {})),
        *_embedded_lines(results.get("embedded_stack", {})),
        f"{len(missed)} target(s) missed" + (": " + ", ".join(missed) if missed else ""),
    ]
    return "\n".join(lines)
