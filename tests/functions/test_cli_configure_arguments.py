"""``hyperpod-ha configure`` on moto: its arguments: bad ones are usage errors (exit 2), an unknown
cluster one line (exit 3), and where the cluster's settings are written (the user's own file)."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from hyperpod_ha_cli.main import main
from hyperpod_ha_cli.stacks import resolve_target
from tests.conftest import ROOT
from tests.functions.configure_account import CLUSTER, REGION, Account, configure, moto_account


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
