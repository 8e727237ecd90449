"""The development commands of ``hyperpod-ha`` (``invoke``, ``simulate``, ``lab``, ``local``),
one module each, and the development halves of the on-call ones (``status --embedded``/``--lab``,
``drill start --lab``). The on-call command (``hyperpod_ha_cli``) finds this package by name when
the ``dev`` extra is installed and adds these commands; they may import the runtime package, the
on-call command's parts, the other development tools and the lab (lazily, where only one
subcommand needs it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hyperpod_ha_cli.output import result_stream

__all__ = ["add_parsers", "project_root", "result_stream"]


def project_root() -> Path:
    """The checkout holding template.yaml when run from one; otherwise the copy of the template,
    functions and state machines installed with this package (``hyperpod_ha_dev/project``)."""
    for candidate in [Path.cwd(), *Path.cwd().parents]:
        if (candidate / "template.yaml").is_file() and (candidate / "functions").is_dir():
            return candidate
    return Path(__file__).resolve().parents[1] / "project"


def add_parsers(commands: Any) -> dict[str, tuple[str, str]]:
    """Each development command's arguments; its module and function by name."""
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
    invoke.add_argument("--region", help="the stack's region")
    invoke.add_argument("--profile", help="an AWS CLI profile")

    simulate = commands.add_parser("simulate", help="run a scenario end to end on the embedded stack")
    simulate.add_argument(
        "scenario", help="healthy, failover, both-down, split-brain, ... ('list' to list them)"
    )
    simulate.add_argument("--json", action="store_true", help="print one JSON object instead of the timeline")
    simulate.add_argument("--lab", action="store_true", help="against the real Slurm lab (root)")
    simulate.add_argument(
        "--status", action="store_true", help="then the status view of the stack the scenario ran on"
    )
    simulate.add_argument(
        "--messages", action="store_true", help="then every message published and OpsItem opened (the pages)"
    )

    from hyperpod_ha_dev.cli import lab, local

    local.add_parser(commands)
    lab.add_lab_parser(commands)
    return {
        "invoke": ("hyperpod_ha_dev.cli.invoke", "run_invoke"),
        "simulate": ("hyperpod_ha_dev.cli.simulate", "run_simulate"),
        "local": ("hyperpod_ha_dev.cli.local", "run_local"),
        "lab": ("hyperpod_ha_dev.cli.lab", "run_lab_command"),
    }
