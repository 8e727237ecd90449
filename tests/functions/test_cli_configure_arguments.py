"""``hyperpod-ha configure`` on moto: its arguments: bad ones are usage errors (exit 2), an unknown
cluster one line (exit 1), and where samconfig.toml is written outside a checkout."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from hyperpod_ha_dev.cli import main
from tests.functions.configure_account import CLUSTER, REGION, Account, configure, moto_account


@pytest.fixture
def account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Account]:
    yield from moto_account(tmp_path, monkeypatch)


def test_outside_a_checkout_it_writes_in_the_working_directory(
    account: Account, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hyperpod_ha_dev.cli import project_root

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    installed = project_root() / "samconfig.toml"  # the copy shipped with the package

    assert (
        main(
            [
                "configure",
                "--cluster",
                CLUSTER,
                "--multihead-stack",
                "sagemaker-hyperpod-multihead",
                "--no-input",
            ]
        )
        == 0
    )

    assert CLUSTER in tomllib.loads((elsewhere / "samconfig.toml").read_text())
    assert not installed.exists()


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
        == 1
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
