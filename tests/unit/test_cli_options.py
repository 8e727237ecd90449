"""Every ``hyperpod-ha`` command that talks to an AWS account takes ``--region`` and
``--profile``; the command itself takes ``--version``."""

from __future__ import annotations

import argparse
import json

import pytest

from hyperpod_ha_dev.cli import build_parser

# The commands that call AWS in a real account (the others run on moto or the lab).
TALKS_TO_AWS = ("invoke", "runbook start", "drill start", "status", "configure")


def _command(words: str) -> argparse.ArgumentParser:
    parser = build_parser()
    for word in words.split():
        [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        parser = sub.choices[word]
    return parser


@pytest.mark.parametrize("words", TALKS_TO_AWS)
def test_every_command_that_talks_to_aws_takes_region_and_profile(words: str) -> None:
    options = {option for action in _command(words)._actions for option in action.option_strings}
    assert {"--region", "--profile"} <= options


def test_the_command_has_a_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith("hyperpod-ha ")


@pytest.mark.parametrize(
    "words",
    [
        ["status", "--cluster", "Not_A_Cluster!", "--json"],
        ["simulate", "--json", "--no-such-option"],
        ["--json"],
        ["status", "--cluster", "Not_A_Cluster!", "--jso"],
    ],
)
def test_a_usage_error_under_json_is_one_json_object_and_one_stderr_line(
    words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    from hyperpod_ha_dev.cli import main

    with pytest.raises(SystemExit) as exited:
        main(words)
    assert exited.value.code == 2
    captured = capsys.readouterr()
    error = json.loads(captured.out)  # exactly one document: json.loads refuses anything beside it
    assert error["exit_code"] == 2
    assert error["error"] == captured.err.strip()
    assert len(captured.err.strip().splitlines()) == 1


def test_a_usage_error_without_json_leaves_stdout_empty(capsys: pytest.CaptureFixture[str]) -> None:
    from hyperpod_ha_dev.cli import main

    with pytest.raises(SystemExit):
        main(["status", "--cluster", "Not_A_Cluster!"])
    assert capsys.readouterr().out == ""
