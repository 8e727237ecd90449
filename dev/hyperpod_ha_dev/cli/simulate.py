"""``hyperpod-ha simulate``: a whole scenario on the embedded stack, as a timeline or JSON.

The timeline is printed as the run goes, each line when its state has run (with ``--json``,
nothing but the one object at the end). ``--status`` adds the status view (``hyperpod-ha
status``'s) of the embedded stack as the scenario left it; with ``--json`` it is the object's
``status``. Exit 0 when the scenario came out as expected, 1 when not, 2 for an unknown
scenario.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any, TextIO

from hyperpod_ha_cli.errors import UsageError
from hyperpod_ha_cli.text import reason_lines, seconds
from hyperpod_ha_dev.cli import project_root, result_stream

if TYPE_CHECKING:
    from hyperpod_ha_dev.simulation.engine import EmbeddedRun, ScenarioResult
    from hyperpod_ha_dev.simulation.timeline import Follow, TimelineEntry


def known_scenarios(lab: bool) -> dict[str, tuple[str, str]]:
    """Name: (summary, what it must come out as)."""
    if lab:
        from hyperpod_ha_dev.simulation.lab import LAB_SCENARIOS

        return {name: (s.summary, s.expect_label) for name, s in LAB_SCENARIOS.items()}
    from hyperpod_ha_dev.simulation.drill import DRILL_SCENARIOS
    from hyperpod_ha_dev.simulation.scenarios import SCENARIOS

    known = {name: (s.summary, s.expect_verdict) for name, s in SCENARIOS.items()}
    known.update({name: (d.summary, d.expect_outcome) for name, d in DRILL_SCENARIOS.items()})
    return known


def run_simulate(args: argparse.Namespace) -> int:
    known = known_scenarios(args.lab)
    out = result_stream()
    if args.scenario == "list":
        for name, (summary, expected) in known.items():
            print(f"{name:24} {summary} -> {expected}", file=out)
        return 0
    if args.scenario not in known:
        raise UsageError(f"unknown scenario {args.scenario!r}; known: {', '.join(known)}")
    if args.lab and (args.status or args.messages):
        raise UsageError(
            "--status and --messages go with the embedded scenarios "
            "(after a lab drill: hyperpod-ha status --lab)"
        )
    from hyperpod_ha_dev.simulation.scenarios import SCENARIOS

    if not args.lab and args.scenario not in SCENARIOS:
        return _simulate_drill(args, out)
    status: dict[str, Any] = {}
    pages: dict[str, Any] = {}
    result: ScenarioResult
    if args.lab:
        from hyperpod_ha_dev.simulation.lab import run_lab_scenario

        # A lab scenario's timeline mixes the lab's own notes in: it is printed whole at the end.
        result = run_lab_scenario(args.scenario, project_root())
        streamed = False
    else:
        from hyperpod_ha_dev.simulation.engine import run_scenario

        scenario = SCENARIOS[args.scenario]
        streamed = not args.json
        if streamed:
            print(_heading(scenario.name, scenario.summary), file=out, flush=True)
        result = run_scenario(
            scenario,
            project_root(),
            _collectors(args, status, pages),
            follow=_printed(out) if streamed else None,
        )
    if args.json:
        data = {**result.to_json(), **pages}
        if args.status:
            data["status"] = status
        print(json.dumps(data, indent=2, default=str), file=out)
    else:
        print("\n".join(_ending(result) if streamed else render_timeline(result).splitlines()), file=out)
        _print_status(out, status)
        _print_messages(out, pages)
    out.flush()
    return 0 if result.passed else 1


def _status_into(found: dict[str, Any]) -> Any:
    """A callback for the finished run: the status view of its stack, kept in ``found``."""

    def collect(run: EmbeddedRun) -> None:
        from hyperpod_ha_cli.stacks import Target, stack_for_cluster
        from hyperpod_ha_cli.status import check, cluster_status

        cluster = str(run.stack.parameters["ClusterName"])
        target = Target(cluster, run.stack.name, None, None, {"stack_name": "the embedded stack"})
        found.update(cluster_status(stack_for_cluster(target), cluster))
        found["check"] = check(found, None)

    return collect


def _collectors(args: argparse.Namespace, status: dict[str, Any], pages: dict[str, Any]) -> Any:
    """What to collect from the finished run's stack: its status view, its messages, both or none."""
    from hyperpod_ha_dev.cli.messages_view import messages_into

    wanted = [
        *([_status_into(status)] if args.status else []),
        *([messages_into(pages)] if args.messages else []),
    ]
    if not wanted:
        return None

    def collect(run: EmbeddedRun) -> None:
        for each in wanted:
            each(run)

    return collect


def _print_messages(out: TextIO, pages: dict[str, Any]) -> None:
    if pages:
        from hyperpod_ha_dev.cli.messages_view import render_messages

        print(f"\n{render_messages(pages)}", file=out)


def _print_status(out: TextIO, status: dict[str, Any]) -> None:
    if status:
        from hyperpod_ha_cli.status import render

        print(f"\n{render(status)}", file=out)


def _simulate_drill(args: argparse.Namespace, out: TextIO) -> int:
    from hyperpod_ha_cli.drill_text import render_drill_report
    from hyperpod_ha_dev.simulation.drill import DRILL_SCENARIOS, run_drill_scenario

    status: dict[str, Any] = {}
    scenario = DRILL_SCENARIOS[args.scenario]
    if not args.json:
        print(_heading(scenario.name, scenario.summary), file=out, flush=True)
    pages: dict[str, Any] = {}
    drill = run_drill_scenario(
        scenario,
        project_root(),
        _collectors(args, status, pages),
        follow=None if args.json else _printed(out),
    )
    data = {**drill.to_json(), **pages}
    if args.json:
        if args.status:
            data["status"] = status
        print(json.dumps(data, indent=2, default=str), file=out)
    else:
        lines = render_drill_report(drill.report)
        lines += [
            f"outcome: {data.get('outcome')} (expected {drill.expect_outcome})",
            "as expected" if drill.passed else "NOT AS EXPECTED",
        ]
        print("\n".join(lines), file=out)
        _print_status(out, status)
        _print_messages(out, pages)
    out.flush()
    return 0 if drill.passed else 1


def _printed(out: TextIO) -> Follow:
    """Each timeline entry printed (and flushed) as the run makes it."""

    from hyperpod_ha_dev.simulation.timeline import timeline_json

    def follow(entry: TimelineEntry) -> None:
        print(_timeline_line(timeline_json(entry)), file=out, flush=True)

    return follow


def _heading(name: str, summary: str) -> str:
    return f"scenario {name}: {summary}"


def _timeline_line(entry: dict[str, Any]) -> str:
    detail = f"  {entry['detail']}" if entry["detail"] else ""
    return f"  {seconds(entry['seconds']):>9}  {entry['what']}{detail}"


def render_timeline(result: ScenarioResult) -> str:
    data = result.to_json()
    lines = [_heading(data["scenario"], result.scenario.summary)]
    lines += [_timeline_line(entry) for entry in data["timeline"]]
    return "\n".join([*lines, *_ending(result)])


def _ending(result: ScenarioResult) -> list[str]:
    """What follows the timeline: the verdict, its reasons, what the run left."""
    data = result.to_json()
    lines: list[str] = []
    incidents = ", ".join(i["ops_item_id"] for i in data["incidents"]) or "none"
    snapshots = ", ".join(s["backup_id"] for s in data["snapshots"]) or "none"
    lines.append(f"verdict: {data['verdict']} (expected {data['expected']['verdict']})")
    lines += reason_lines(result.reasons)
    lines += [
        f"incidents: {incidents}   snapshots: {snapshots}   executions: {data['executions']}",
        f"lease: {'released' if data['lease_released'] else 'STILL HELD'}",
        "as expected" if data["passed"] else "NOT AS EXPECTED",
    ]
    return lines
