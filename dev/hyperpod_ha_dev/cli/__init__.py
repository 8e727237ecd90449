"""The ``hyperpod-ha`` command: invoke, simulate, the runbook, drills, status, the lab, the local
stand-in; one module per subcommand. It may import the runtime package, the other development
tools and the lab (lazily, where only one subcommand needs it)."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO


def project_root() -> Path:
    """The checkout holding template.yaml when run from one; otherwise the copy of the template,
    functions and state machines installed with this package (``hyperpod_ha_dev/project``)."""
    for candidate in [Path.cwd(), *Path.cwd().parents]:
        if (candidate / "template.yaml").is_file() and (candidate / "functions").is_dir():
            return candidate
    return Path(__file__).resolve().parents[1] / "project"


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

    from hyperpod_ha_dev.cli import configure, drill, local, status

    for module in (drill, status, local, configure):
        module.add_parser(commands)

    from hyperpod_ha_dev.cli.lab import add_lab_parser

    add_lab_parser(commands)

    args = parser.parse_args(argv)
    # Each subcommand's module is imported only when it runs (moto, SAM, the lab are heavy).
    module_name, function_name = _COMMANDS[args.command]
    module = importlib.import_module(f"hyperpod_ha_dev.cli.{module_name}")
    run: Callable[[argparse.Namespace], int] = getattr(module, function_name)
    return run(args)


_COMMANDS: dict[str, tuple[str, str]] = {
    "invoke": ("invoke", "run_invoke"),
    "simulate": ("simulate", "run_simulate"),
    "runbook": ("runbook", "run_runbook_start"),
    "drill": ("drill", "run_drill_start"),
    "status": ("status", "run_status"),
    "local": ("local", "run_local"),
    "lab": ("lab", "run_lab_command"),
    "configure": ("configure", "run_configure"),
}
