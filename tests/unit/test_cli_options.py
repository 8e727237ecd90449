"""Every ``hyperpod-ha`` command that talks to an AWS account takes ``--region`` and
``--profile``, every on-call command ``--json``; every value an option takes has a bound (a usage
error, exit 2, before anything is asked of AWS); the command itself takes ``--version``."""

from __future__ import annotations

import argparse
import json

import pytest

from hyperpod_ha_cli.main import build_parser, with_default_subcommand

# The commands that call AWS in a real account (the others run on moto or the lab).
TALKS_TO_AWS = ("invoke", "runbook start", "drill start", "restore start", "status", "configure")
ON_CALL = ("runbook start", "drill start", "restore start", "status", "configure")


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
    from hyperpod_ha_cli.main import main

    with pytest.raises(SystemExit) as exited:
        main(words)
    assert exited.value.code == 2
    captured = capsys.readouterr()
    error = json.loads(captured.out)  # exactly one document: json.loads refuses anything beside it
    assert error["exit_code"] == 2
    assert error["error"] == captured.err.strip()
    assert len(captured.err.strip().splitlines()) == 1


def test_a_usage_error_without_json_leaves_stdout_empty(capsys: pytest.CaptureFixture[str]) -> None:
    from hyperpod_ha_cli.main import main

    with pytest.raises(SystemExit):
        main(["status", "--cluster", "Not_A_Cluster!"])
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("words", ON_CALL)
def test_every_on_call_command_takes_json(words: str) -> None:
    assert "--json" in {option for action in _command(words)._actions for option in action.option_strings}


@pytest.mark.parametrize(
    ("words", "refused"),
    [
        (["status", "--cluster", "ml", "--region", "mars-east-1"], "'mars-east-1' is not an AWS region"),
        (["runbook", "start", "--cluster", "ml", "--settle", "-5"], "'-5' is not a duration from 0 to 3600"),
        (["runbook", "start", "--cluster", "ml", "--settle", "2h"], "'2h' is not a duration from 0 to 3600"),
        (["runbook", "start", "--cluster", "ml", "--reason", "x" * 201], "1 to 200 characters"),
        (["status", "--cluster", "ml", "--max-age", "10s"], "'10s' is not a duration from 60"),
        (["restore", "start", "--cluster", "ml", "--stack-name", "1bad"], "'1bad' is not a CloudFormation"),
        (["drill", "start", "--cluster", "ml", "--profile", "a b"], "'a b' is not an AWS profile name"),
    ],
)
def test_a_value_out_of_bounds_is_a_usage_error(
    words: list[str], refused: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from hyperpod_ha_cli.main import main

    with pytest.raises(SystemExit) as exited:
        main(words)
    assert exited.value.code == 2
    assert refused in capsys.readouterr().err


def test_durations_read_as_a_person_types_them() -> None:
    from hyperpod_ha_cli.options import seconds_within

    parse = seconds_within(0, 86400)
    assert [parse(text) for text in ("90", "90s", "5m", "1h30m", "1d")] == [90, 90, 300, 5400, 86400]


def test_without_the_dev_extra_a_development_command_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from hyperpod_ha_cli import dev_tools
    from hyperpod_ha_cli.main import main

    monkeypatch.setattr(dev_tools, "available", lambda: False)
    assert main(["simulate", "failover", "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == (
        "hyperpod-ha: simulate: simulate is a development command: "
        "pip install 'hyperpod-ha[dev]' (in a checkout: make venv)"
    )
    assert json.loads(captured.out)["exit_code"] == 2
    assert main(["status", "--cluster", "ml", "--lab"]) == 2
    assert "status --lab/--embedded is a development command" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["silence", "--cluster", "c", "--for", "2h", "--reason", "r"], "start"),
        (["silence", "start", "--cluster", "c", "--for", "2h", "--reason", "r"], "start"),
        (["silence", "list", "--cluster", "c"], "list"),
        (["silence", "end", "--cluster", "c"], "end"),
    ],
)
def test_silence_without_a_subcommand_starts_one(words: list[str], expected: str) -> None:
    args = build_parser().parse_args(with_default_subcommand(words))
    assert args.silence_command == expected


def test_only_silence_takes_a_default_subcommand() -> None:
    assert with_default_subcommand(["status", "--cluster", "c"]) == ["status", "--cluster", "c"]
    assert with_default_subcommand(["silence", "--help"]) == ["silence", "--help"]
    assert with_default_subcommand(["--verbose", "silence", "--cluster", "c"])[:3] == [
        "--verbose",
        "silence",
        "start",
    ]
