"""The ``hyperpod-ha`` command: invoke, simulate, the runbook, drills, status, the lab, the local
stand-in; one module per subcommand. It may import the runtime package, the other development
tools and the lab (lazily, where only one subcommand needs it).

Every error ends in one line on stderr (``hyperpod-ha: <command>: <error>``; the traceback
only with ``--verbose``): exit 2 for a usage error, 1 for a runtime error, unless the command
documents its own codes (runbook, drill, status, lab). With ``--json``, a command that fails
before printing its result prints ``{"error": ..., "exit_code": ...}`` instead, so stdout is
always one JSON object (a usage error argparse finds too, with ``exit_code`` 2)."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from importlib import metadata
from pathlib import Path
from typing import NoReturn, TextIO

from hyperpod_ha_dev.cli.errors import RUNTIME_ERROR, USAGE_ERROR, CommandError
from hyperpod_ha_dev.cli.output import command_output, result_stream

__all__ = ["main", "project_root", "result_stream"]


def project_root() -> Path:
    """The checkout holding template.yaml when run from one; otherwise the copy of the template,
    functions and state machines installed with this package (``hyperpod_ha_dev/project``)."""
    for candidate in [Path.cwd(), *Path.cwd().parents]:
        if (candidate / "template.yaml").is_file() and (candidate / "functions").is_dir():
            return candidate
    return Path(__file__).resolve().parents[1] / "project"


def version() -> str:
    try:
        return metadata.version("hyperpod-ha")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


class _UsageError(SystemExit):
    """argparse's usage error, its one line kept for ``--json``'s error object."""

    def __init__(self, line: str) -> None:
        super().__init__(USAGE_ERROR)
        self.line = line


class _Parser(argparse.ArgumentParser):
    """A usage error in one line (argparse prints the whole usage first), exit 2."""

    def error(self, message: str) -> NoReturn:
        line = f"{self.prog}: {message} (see {self.prog} --help)"
        print(line, file=sys.stderr)
        raise _UsageError(line)


def build_parser() -> argparse.ArgumentParser:
    from hyperpod_ha_dev.cli.aws import add_account_options
    from hyperpod_ha_dev.cli.cluster_stack import cluster_name

    parser = _Parser(prog="hyperpod-ha", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
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
    add_account_options(invoke)

    simulate = commands.add_parser("simulate", help="run a scenario end to end on the embedded stack")
    simulate.add_argument(
        "scenario", help="healthy, failover, both-down, split-brain, ... ('list' to list them)"
    )
    simulate.add_argument("--json", action="store_true", help="print one JSON object instead of the timeline")
    simulate.add_argument("--lab", action="store_true", help="against the real Slurm lab (root)")
    simulate.add_argument(
        "--status", action="store_true", help="then the status view of the stack the scenario ran on"
    )

    runbook = commands.add_parser("runbook", help="the operator runbook")
    runbook_commands = runbook.add_subparsers(dest="runbook_command", required=True)
    start = runbook_commands.add_parser("start", help="start a failover verification in the deployed stack")
    start.add_argument("--cluster", required=True, type=cluster_name)
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
    add_account_options(start)

    from hyperpod_ha_dev.cli import configure, drill, local, restore, status

    for module in (drill, restore, status, local, configure):
        module.add_parser(commands)

    from hyperpod_ha_dev.cli.lab import add_lab_parser

    add_lab_parser(commands)
    # --verbose anywhere: before the command or after it (a subcommand's default must not
    # overwrite what was given before it).
    parser.add_argument("-v", "--verbose", action="store_true", help="logs (and tracebacks) on stderr")
    for sub in _subparsers(parser):
        sub.add_argument(
            "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="logs on stderr"
        )
    return parser


def _subparsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    for action in parser._actions:  # argparse keeps its subcommands only there
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield sub
                yield from _subparsers(sub)


def command_name(args: argparse.Namespace) -> str:
    """``runbook start``, ``lab fault``, ...: the words that named the command."""
    words = [args.command]
    for key in ("runbook_command", "drill_command", "restore_command", "local_command", "lab_command"):
        if getattr(args, key, None):
            words.append(getattr(args, key))
    return " ".join(words)


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(words)
    except _UsageError as error:
        # stdout is one JSON object, a usage error's too (argparse also takes --js, --jso)
        if any(len(word) > 3 and "--json".startswith(word) for word in words):
            print(json.dumps({"error": error.line, "exit_code": USAGE_ERROR}), flush=True)
        raise
    verbose = bool(getattr(args, "verbose", False))
    name = command_name(args)
    try:
        with _restored_account(), command_output(verbose) as out:
            # Each subcommand's module is imported only when it runs (moto, SAM, the lab are heavy).
            module_name, function_name = _COMMANDS[args.command]
            module = importlib.import_module(f"hyperpod_ha_dev.cli.{module_name}")
            run: Callable[[argparse.Namespace], int] = getattr(module, function_name)
            try:
                return run(args)
            except Exception as error:
                if getattr(args, "json", False) and not getattr(error, "result_printed", False):
                    _json_error(out, error)
                raise
    except CommandError as error:
        return _failed(name, str(error), error.code, verbose)
    except KeyboardInterrupt:
        return _failed(name, "interrupted", 130, verbose)
    except Exception as error:  # anything unexpected: one line, the traceback with --verbose
        return _failed(name, f"{type(error).__name__}: {error}", RUNTIME_ERROR, verbose)


def _json_error(out: TextIO, error: Exception) -> None:
    """The error as the one JSON object of a ``--json`` command (inside its output: after it,
    stdout may already be closed to everything but the result)."""
    code = error.code if isinstance(error, CommandError) else RUNTIME_ERROR
    message = str(error) if isinstance(error, CommandError) else f"{type(error).__name__}: {error}"
    print(json.dumps({"error": _first_line(message), "exit_code": code}), file=out, flush=True)


def _first_line(message: str) -> str:
    return message.strip().splitlines()[0] if message.strip() else "failed"


def _failed(name: str, message: str, code: int, verbose: bool) -> int:
    if verbose and sys.exc_info()[0] is not None:
        traceback.print_exc(file=sys.stderr)
    print(f"hyperpod-ha: {name}: {_first_line(message)}", file=sys.stderr)
    return code


@contextlib.contextmanager
def _restored_account() -> Iterator[None]:
    """``--region``/``--profile`` change the process's default session; in process (tests), undone."""
    import boto3

    saved_session = boto3.DEFAULT_SESSION
    keys = ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE")
    saved = {key: os.environ.get(key) for key in keys}
    try:
        yield
    finally:
        boto3.DEFAULT_SESSION = saved_session
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


_COMMANDS: dict[str, tuple[str, str]] = {
    "invoke": ("invoke", "run_invoke"),
    "simulate": ("simulate", "run_simulate"),
    "runbook": ("runbook", "run_runbook_start"),
    "drill": ("drill", "run_drill_start"),
    "restore": ("restore", "run_restore_start"),
    "status": ("status", "run_status"),
    "local": ("local", "run_local"),
    "lab": ("lab", "run_lab_command"),
    "configure": ("configure", "run_configure"),
}
