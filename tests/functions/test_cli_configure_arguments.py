"""``hyperpod-ha configure`` on moto: its arguments: bad ones are usage errors (exit 2), an unknown
cluster one line (exit 3), where the cluster's settings are written (the user's own file), and
who is told (``NotificationEmail``: given, asked, or empty with a warning)."""

from __future__ import annotations

import io
import json
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from hyperpod_ha_cli.main import main
from hyperpod_ha_cli.stacks import resolve_target
from tests.conftest import ROOT
from tests.functions.configure_account import CLUSTER, REGION, Account, configure, moto_account, sam_view


@pytest.fixture
def account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Account]:
    yield from moto_account(tmp_path, monkeypatch)


def test_it_writes_the_user_s_own_file_and_every_command_finds_the_stack_there(
    account: Account, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_file = tmp_path / "home" / ".config" / "hyperpod-ha" / "samconfig.toml"
    monkeypatch.setenv("HYPERPOD_HA_CONFIG", str(user_file))
    monkeypatch.chdir(ROOT)  # in the checkout: its tracked samconfig.toml stays as it is
    tracked = (ROOT / "samconfig.toml").read_text()
    arguments = ["--multihead-stack", "sagemaker-hyperpod-multihead", "--region", REGION, "--no-input"]

    assert main(["configure", "--cluster", CLUSTER, *arguments]) == 0

    assert CLUSTER in tomllib.loads(user_file.read_text())
    assert (ROOT / "samconfig.toml").read_text() == tracked
    target = resolve_target(CLUSTER, {})
    assert (target.stack_name, target.region) == (f"hyperpod-ha-{CLUSTER}", REGION)
    assert target.sources["stack_name"] == f"{user_file} [{CLUSTER}]"


def test_an_unknown_cluster_is_one_line(account: Account, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "configure",
                "--cluster",
                "no-such",
                "--region",
                REGION,
                "--config-file",
                str(account.config_file),
                "--no-input",
            ]
        )
        == 3
    )
    error = capsys.readouterr().err.strip()
    assert error.startswith("hyperpod-ha: configure: cannot describe cluster no-such:")
    assert len(error.splitlines()) == 1


def test_an_unknown_profile_is_a_usage_error(account: Account, capsys: pytest.CaptureFixture[str]) -> None:
    assert configure(account, "--profile", "no-such-profile") == 2
    assert "no-such-profile" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        (["--cluster", "bad_name"], "ClusterName: 'bad_name' does not match"),
        (
            ["--cluster", CLUSTER, "--stack-name", "1st"],
            "--stack-name: '1st' is not a CloudFormation stack name",
        ),
        (["--cluster", CLUSTER, "--multihead-stack", "a b"], "--multihead-stack: 'a b' is not a stack name"),
    ],
)
def test_bad_arguments_are_usage_errors(
    account: Account, capsys: pytest.CaptureFixture[str], arguments: list[str], reason: str
) -> None:
    assert main(["configure", *arguments, "--region", REGION, "--config-file", str(account.config_file)]) == 2
    assert reason in capsys.readouterr().err


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("ops", "--notification-email: NotificationEmail: 'ops' is not an e-mail address"),
        ("ops@localhost", "is not an e-mail address"),
        ("ops team@example.com", "no spaces, quotes or backslashes"),
        (f"{'o' * 250}@example.com", "NotificationEmail: longer than 254 characters"),
    ],
)
def test_a_notification_email_that_is_not_an_address_is_a_usage_error(
    account: Account, capsys: pytest.CaptureFixture[str], address: str, reason: str
) -> None:
    before = account.config_file.read_text()
    assert configure(account, "--no-input", "--notification-email", address) == 2
    error = capsys.readouterr().err.strip()
    assert reason in error
    assert len(error.splitlines()) == 1
    assert account.config_file.read_text() == before


def test_the_notification_email_given_is_written_and_nobody_is_warned_about(
    account: Account, capsys: pytest.CaptureFixture[str]
) -> None:
    assert configure(account, "--no-input", "--notification-email", "oncall+hyperpod@example.com") == 0
    assert sam_view(account.config_file, CLUSTER)[1]["NotificationEmail"] == "oncall+hyperpod@example.com"
    assert "warning" not in capsys.readouterr().out


def test_without_a_notification_email_configure_warns_that_nobody_is_told(
    account: Account, capsys: pytest.CaptureFixture[str]
) -> None:
    assert configure(account, "--no-input", "--json") == 0
    captured = capsys.readouterr()
    written = json.loads(captured.out)
    assert "NotificationEmail" not in written["parameters"]  # the template's empty default applies
    (warning,) = written["warnings"]
    assert warning.startswith("no NotificationEmail: nobody is told")
    assert f"warning: {warning}" in captured.err  # the words, beside the JSON


def test_the_notification_email_is_asked_and_checked(
    account: Account, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("not-an-address\nops@example.com\n"))
    assert configure(account) == 0
    assert sam_view(account.config_file, CLUSTER)[1]["NotificationEmail"] == "ops@example.com"
    out = capsys.readouterr().out
    assert "refused: NotificationEmail: 'not-an-address' is not an e-mail address" in out
    assert "warning" not in out


@pytest.mark.parametrize("typed", ["\n", ""])  # an empty line, or the end of input
def test_an_empty_answer_leaves_nobody_told_and_says_so(
    account: Account, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, typed: str
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(typed))
    assert configure(account) == 0
    assert "NotificationEmail" not in sam_view(account.config_file, CLUSTER)[1]
    assert "warning: no NotificationEmail: nobody is told" in capsys.readouterr().out
