"""The ``hyperpod-ha`` command: the on-call commands (status, runbook, drill, restore, configure,
doctor, silence) and, with the ``dev`` extra, the development ones (simulate, invoke, lab, local).

Which stack a command acts on: flags, then HYPERPOD_HA_* variables, then the cluster's entry in
~/.config/hyperpod-ha/samconfig.toml or the checkout's samconfig.toml, then hyperpod-ha-<cluster>
(docs/operations.md, "Which stack"). Exit codes, the same for every command: 0 verified, 1 not
verified (the command worked, the answer is no), 2 usage error, 3 runtime error, 130
interrupted. Every error ends in one line on stderr (the traceback only with --verbose); with
--json, stdout is always one JSON object, an error's too ({"error": ..., "exit_code": ...})."""

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
from typing import NoReturn, TextIO

from hyperpod_ha_cli import dev_tools
from hyperpod_ha_cli.errors import INTERRUPTED, RUNTIME_ERROR, USAGE_ERROR, CommandError
from hyperpod_ha_cli.output import command_output

# The on-call commands: module and function, each imported only when it runs.
COMMANDS: dict[str, tuple[str, str]] = {
    "status": ("hyperpod_ha_cli.status", "run_status"),
    "runbook": ("hyperpod_ha_cli.runbook", "run_runbook_start"),
    "drill": ("hyperpod_ha_cli.drill", "run_drill_start"),
    "restore": ("hyperpod_ha_cli.restore", "run_restore_start"),
    "configure": ("hyperpod_ha_cli.configure.command", "run_configure"),
    "doctor": ("hyperpod_ha_cli.doctor", "run_doctor"),
    "silence": ("hyperpod_ha_cli.silence", "run_silence"),
}
DEV_COMMANDS = {
    "simulate": "run a scenario end to end on the embedded stack (dev extra)",
    "invoke": "run a template function in process with an event (dev extra)",
    "lab": "the real Slurm HA lab (dev extra, root)",
    "local": "the local stand-in of a deployed stack (dev extra)",
}


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
    from hyperpod_ha_cli import doctor, drill, restore, runbook, silence, status
    from hyperpod_ha_cli.configure import command as configure

    parser = _Parser(prog="hyperpod-ha", description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for module in (status, runbook, drill, restore, doctor, silence, configure):
        module.add_parser(commands)
    if dev_tools.available():
        dev = importlib.import_module("hyperpod_ha_dev.cli")
        COMMANDS.update(dev.add_parsers(commands))
    else:
        for name, help_text in DEV_COMMANDS.items():
            stub = commands.add_parser(name, help=help_text, add_help=False)
            stub.add_argument("words", nargs=argparse.REMAINDER)
            COMMANDS[name] = ("hyperpod_ha_cli.main", "run_missing_dev_command")
    # --verbose anywhere: before the command or after it (a subcommand's default must not
    # overwrite what was given before it).
    parser.add_argument("-v", "--verbose", action="store_true", help="logs (and tracebacks) on stderr")
    for sub in _subparsers(parser):
        sub.add_argument(
            "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="logs on stderr"
        )
    return parser


def run_missing_dev_command(args: argparse.Namespace) -> int:
    args.json = "--json" in args.words  # its error is then the one JSON object
    dev_tools.load("cli", args.command)  # raises: the extra is not installed
    return USAGE_ERROR


def _subparsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    for action in parser._actions:  # argparse keeps its subcommands only there
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield sub
                yield from _subparsers(sub)


def command_name(args: argparse.Namespace) -> str:
    """``runbook start``, ``lab fault``, ...: the words that named the command."""
    words = [args.command]
    for name in ("runbook", "drill", "restore", "silence", "local", "lab"):
        if getattr(args, f"{name}_command", None):
            words.append(getattr(args, f"{name}_command"))
    return " ".join(words)


def with_default_subcommand(words: list[str]) -> list[str]:
    """``silence --cluster C --for 2h --reason R`` is ``silence start ...``: the form on-call
    types most (as ``git stash`` is ``git stash push``); ``silence list`` and ``end`` are named."""
    commands = [i for i, word in enumerate(words) if not word.startswith("-")]
    if not commands or words[commands[0]] != "silence":
        return words
    at = commands[0] + 1
    if at < len(words) and words[at].startswith("-") and words[at] not in ("-h", "--help"):
        return [*words[:at], "start", *words[at:]]
    return words


def main(argv: Sequence[str] | None = None) -> int:
    words = with_default_subcommand(list(sys.argv[1:] if argv is None else argv))
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
            module_name, function_name = COMMANDS[args.command]
            run: Callable[[argparse.Namespace], int] = getattr(
                importlib.import_module(module_name), function_name
            )
            try:
                return run(args)
            except Exception as error:
                if getattr(args, "json", False) and not getattr(error, "result_printed", False):
                    _json_error(out, error)
                raise
    except CommandError as error:
        return _failed(name, str(error), error.code, verbose)
    except KeyboardInterrupt:
        return _failed(name, "interrupted", INTERRUPTED, verbose)
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
