"""Every ``hyperpod-ha`` command that talks to an AWS account takes ``--region`` and
``--profile``; the command itself takes ``--version``."""

from __future__ import annotations

import argparse

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
