"""The ``hyperpod-ha`` command: invoke a function, simulate a scenario, run the runbook."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO


def project_root() -> Path:
    """The checkout holding template.yaml (the package lives in its layers/ directory)."""
    here = Path(__file__).resolve()
    for candidate in [Path.cwd(), *here.parents]:
        if (candidate / "template.yaml").is_file() and (candidate / "functions").is_dir():
            return candidate
    raise SystemExit("hyperpod-ha: run it from the project checkout (no template.yaml found)")


def result_stream() -> TextIO:
    """The real stdout for the result; everything else written to stdout (logs, metrics) goes to stderr."""
    sys.stdout.flush()
    result = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hyperpod-ha", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    invoke = commands.add_parser("invoke", help="run a template function in process with an event")
    invoke.add_argument("function", help="the function's logical id in template.yaml")
    invoke.add_argument("--event", required=True, type=Path, help="JSON event file ('-' for stdin)")
    invoke.add_argument(
        "--embedded", action="store_true", help="against the embedded stack (moto, in process)"
    )
    invoke.add_argument(
        "--env-vars", type=Path, help="environment overrides, the JSON format of sam local invoke"
    )
    invoke.add_argument(
        "--stack-name", help="deployed stack whose resources fill the environment (default: samconfig.toml)"
    )

    simulate = commands.add_parser("simulate", help="run a scenario end to end on the embedded stack")
    simulate.add_argument(
        "scenario", help="healthy, failover, both-down, split-brain, ... ('list' to list them)"
    )
    simulate.add_argument("--json", action="store_true", help="print one JSON object instead of the timeline")
    simulate.add_argument("--lab", action="store_true", help="against the real Slurm lab (root)")

    runbook = commands.add_parser("runbook", help="the operator runbook")
    runbook_commands = runbook.add_subparsers(dest="runbook_command", required=True)
    start = runbook_commands.add_parser("start", help="start a failover verification in the deployed stack")
    start.add_argument("--cluster", required=True)
    start.add_argument("--reason", default="operator request")
    start.add_argument("--dry-run", action="store_true", help="checks and verdict only")
    start.add_argument(
        "--settle",
        type=int,
        default=0,
        metavar="SECONDS",
        help="wait before the first check (default 0: check now)",
    )
    start.add_argument(
        "--follow", action="store_true", help="show the states as they run; exit 0 verified, 1 not, 2 error"
    )
    start.add_argument("--stack-name", help="default: samconfig.toml's stack_name")

    drill = commands.add_parser("drill", help="failover drills")
    drill_commands = drill.add_subparsers(dest="drill_command", required=True)
    drill_start = drill_commands.add_parser("start", help="start a failover drill in the deployed stack")
    where = drill_start.add_mutually_exclusive_group(required=True)
    where.add_argument("--cluster", help="the cluster the deployed stack watches")
    where.add_argument("--lab", action="store_true", help="against the Slurm lab (not wired yet)")
    drill_start.add_argument("--to", default="auto", metavar="HOST|auto", help="the backup to take control")
    drill_start.add_argument("--hand-back", action="store_true", help="then hand control back to the primary")
    drill_start.add_argument("--dry-run", action="store_true", help="check and plan only: no takeover")
    drill_start.add_argument("--follow", action="store_true", help="show the states as they run")
    drill_start.add_argument("--json", action="store_true", help="wait and print the drill report as JSON")
    drill_start.add_argument("--stack-name", help="default: samconfig.toml's stack_name")

    status = commands.add_parser("status", help="one view of a cluster's HA")
    status.add_argument("--cluster", required=True)
    source = status.add_mutually_exclusive_group()
    source.add_argument("--embedded", action="store_true", help="the embedded stack (moto, in process)")
    source.add_argument("--lab", action="store_true", help="the Slurm lab (not wired yet)")
    status.add_argument("--json", action="store_true")
    status.add_argument("--stack-name", help="default: samconfig.toml's stack_name")

    args = parser.parse_args(argv)
    if args.command == "drill":
        from hyperpod_ha.cli.drill import run_drill_start

        return run_drill_start(args)
    if args.command == "status":
        from hyperpod_ha.cli.status import run_status

        return run_status(args)
    if args.command == "invoke":
        from hyperpod_ha.cli.invoke import run_invoke

        return run_invoke(args)
    if args.command == "simulate":
        from hyperpod_ha.cli.simulate import run_simulate

        return run_simulate(args)
    from hyperpod_ha.cli.runbook import run_runbook_start

    return run_runbook_start(args)
