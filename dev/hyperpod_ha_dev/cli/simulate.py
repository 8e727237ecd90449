"""``hyperpod-ha simulate``: a whole scenario on the embedded stack, as a timeline or JSON."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, TextIO

from hyperpod_ha_dev.cli import project_root, result_stream

if TYPE_CHECKING:
    from hyperpod_ha_dev.simulation.engine import ScenarioResult


def run_simulate(args: argparse.Namespace) -> int:
    from hyperpod_ha_dev.simulation.scenarios import SCENARIOS

    if args.lab:
        from hyperpod_ha_dev.simulation.lab import LAB_SCENARIOS

        known = {name: (s.summary, s.expect_label) for name, s in LAB_SCENARIOS.items()}
    else:
        from hyperpod_ha_dev.simulation.drill import DRILL_SCENARIOS

        known = {name: (s.summary, s.expect_verdict) for name, s in SCENARIOS.items()}
        known.update({name: (d.summary, d.expect_outcome) for name, d in DRILL_SCENARIOS.items()})
    if args.scenario == "list" or args.scenario not in known:
        for name, (summary, expected) in known.items():
            print(f"{name:16} {summary} -> {expected}")
        return 0 if args.scenario == "list" else 2
    out = result_stream()
    if not args.lab and args.scenario not in SCENARIOS:
        return _simulate_drill(args, out)
    result: ScenarioResult
    if args.lab:
        from hyperpod_ha_dev.simulation.lab import run_lab_scenario

        result = run_lab_scenario(args.scenario, project_root())
    else:
        from hyperpod_ha_dev.simulation.engine import run_scenario

        result = run_scenario(SCENARIOS[args.scenario], project_root())
    print(json.dumps(result.to_json(), indent=2) if args.json else render_timeline(result), file=out)
    out.flush()
    return 0 if result.passed else 1


def _simulate_drill(args: argparse.Namespace, out: TextIO) -> int:
    from hyperpod_ha_dev.simulation.drill import DRILL_SCENARIOS, run_drill_scenario

    drill = run_drill_scenario(DRILL_SCENARIOS[args.scenario], project_root())
    data = drill.to_json()
    if args.json:
        print(json.dumps(data, indent=2), file=out)
    else:
        lines = [f"scenario {drill.name}: {DRILL_SCENARIOS[drill.name].summary}"]
        lines += [f"  {e['seconds']:7.2f}s  {e['what']}  {e['detail']}".rstrip() for e in data["timeline"]]
        hand_back = data.get("hand_back") or {}
        lines += [
            f"outcome: {data.get('outcome')} (expected {drill.expect_outcome})",
            f"takeover_seconds: {data.get('takeover_seconds')}",
            f"verified_seconds: {data.get('verified_seconds')}",
            f"jobs_survived: {data.get('jobs_survived')}  test_job: {data.get('test_job')}",
            f"hand_back: verified after {hand_back.get('verified_seconds', '-')} s",
            "PASSED" if drill.passed else "NOT AS EXPECTED",
        ]
        print("\n".join(lines), file=out)
    out.flush()
    return 0 if drill.passed else 1


def render_timeline(result: ScenarioResult) -> str:
    data = result.to_json()
    lines = [f"scenario {data['scenario']}: {result.scenario.summary}"]
    for entry in data["timeline"]:
        detail = f"  {entry['detail']}" if entry["detail"] else ""
        lines.append(f"  {entry['seconds']:7.2f}s  {entry['what']}{detail}")
    incidents = ", ".join(i["ops_item_id"] for i in data["incidents"]) or "none"
    snapshots = ", ".join(s["backup_id"] for s in data["snapshots"]) or "none"
    lines += [
        f"verdict: {data['verdict']} (expected {data['expected']['verdict']})",
        f"incidents: {incidents}   snapshots: {snapshots}   executions: {data['executions']}",
        f"lease released: {data['lease_released']}",
        "PASSED" if data["passed"] else "NOT AS EXPECTED",
    ]
    return "\n".join(lines)
