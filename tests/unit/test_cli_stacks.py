"""The one rule every command follows to find its stack, region and profile: flags, then the
HYPERPOD_HA_* environment, then the cluster's entry in the user's file or the checkout's
samconfig.toml, then hyperpod-ha-<cluster>; entries that disagree are an error, never a guess."""

from __future__ import annotations

from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from hyperpod_ha_cli.errors import UsageError
from hyperpod_ha_cli.samconfig import ConfigFileError, environments
from hyperpod_ha_cli.stacks import Target, connect, resolve_target, stack_for_cluster, user_config_file


def _files(tmp_path: Path, user: str = "", checkout: str = "") -> tuple[dict[str, str], Path]:
    """An environment naming the user's file, and a checkout directory (template.yaml beside)."""
    user_file = tmp_path / "user" / "samconfig.toml"
    user_file.parent.mkdir(parents=True)
    if user:
        user_file.write_text(user)
    work = tmp_path / "checkout"
    (work / "deep").mkdir(parents=True)
    (work / "template.yaml").write_text("Resources: {}\n")
    if checkout:
        (work / "samconfig.toml").write_text(checkout)
    return {"HYPERPOD_HA_CONFIG": str(user_file)}, work / "deep"


def _section(environment: str, stack: str, region: str, extra: str = "") -> str:
    return f'[{environment}.deploy.parameters]\nstack_name = "{stack}"\nregion = "{region}"\n{extra}'


def test_without_any_configuration_the_stack_is_named_after_the_cluster(tmp_path: Path) -> None:
    environ, cwd = _files(tmp_path)
    target = resolve_target("ml-cluster", {}, environ, cwd)
    assert (target.stack_name, target.region, target.profile) == ("hyperpod-ha-ml-cluster", None, None)
    assert target.sources == {"stack_name": "the default name"}


def test_the_user_s_file_then_the_checkout_s_by_the_cluster_s_environment(tmp_path: Path) -> None:
    environ, cwd = _files(
        tmp_path,
        user=_section("ml-cluster", "hp-ml", "us-west-2"),
        checkout=_section("default", "hyperpod-ha", "eu-west-2") + _section("other", "hp-other", "eu-west-1"),
    )
    target = resolve_target("ml-cluster", {}, environ, cwd)
    assert (target.stack_name, target.region) == ("hp-ml", "us-west-2")
    assert target.sources["region"].endswith("user/samconfig.toml [ml-cluster]")
    # The checkout's default environment names no cluster: it is no one's entry.
    other = resolve_target("other", {}, environ, cwd)
    assert (other.stack_name, other.region) == ("hp-other", "eu-west-1")
    # An environment whose ClusterName override is the cluster is its entry too (sam deploy --guided).
    guided = _section("default", "hyperpod-ha", "eu-west-2", 'parameter_overrides = "ClusterName=guided"\n')
    environ, cwd = _files(tmp_path / "2", checkout=guided)
    assert resolve_target("guided", {}, environ, cwd).stack_name == "hyperpod-ha"


def test_flags_then_the_environment_come_before_the_files(tmp_path: Path) -> None:
    environ, cwd = _files(tmp_path, user=_section("ml-cluster", "hp-ml", "us-west-2"))
    environ |= {"HYPERPOD_HA_REGION": "ap-south-1", "HYPERPOD_HA_STACK_NAME": "from-env"}
    target = resolve_target("ml-cluster", {"stack_name": "from-flag", "region": None}, environ, cwd)
    assert (target.stack_name, target.region) == ("from-flag", "ap-south-1")
    assert target.sources == {"stack_name": "--stack-name", "region": "HYPERPOD_HA_REGION"}


def test_two_entries_that_disagree_are_an_error_naming_both(tmp_path: Path) -> None:
    environ, cwd = _files(
        tmp_path,
        user=_section("ml-cluster", "hp-ml", "us-west-2"),
        checkout=_section("ml-cluster", "hyperpod-ha-ml-cluster", "us-west-2"),
    )
    with pytest.raises(UsageError) as refused:
        resolve_target("ml-cluster", {}, environ, cwd)
    message = str(refused.value)
    assert message.startswith("cluster ml-cluster has more than one stack name configured (")
    assert "hp-ml in " in message
    assert "hyperpod-ha-ml-cluster in " in message
    assert message.endswith("give --stack-name, or remove the entry that is not meant")
    # The flag settles it; the region, the same in both, is no conflict.
    target = resolve_target("ml-cluster", {"stack_name": "hp-ml"}, environ, cwd)
    assert (target.stack_name, target.region) == ("hp-ml", "us-west-2")


@pytest.mark.parametrize(
    ("flags", "environ", "expected"),
    [
        ({"region": "mars-east-1"}, {}, "'mars-east-1' (--region) is not an AWS region"),
        ({}, {"HYPERPOD_HA_REGION": "mars-east-1"}, "(HYPERPOD_HA_REGION) is not an AWS region"),
        ({}, {"HYPERPOD_HA_STACK_NAME": "1-bad"}, "(HYPERPOD_HA_STACK_NAME) is not a CloudFormation stack"),
        ({"profile": "a b"}, {}, "'a b' (--profile) is not a profile name"),
    ],
)
def test_every_value_is_checked_whatever_its_source(
    tmp_path: Path, flags: dict[str, str], environ: dict[str, str], expected: str
) -> None:
    base, cwd = _files(tmp_path)
    with pytest.raises(UsageError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        resolve_target("ml-cluster", flags, base | environ, cwd)


def test_a_file_that_is_not_toml_is_a_usage_error(tmp_path: Path) -> None:
    environ, cwd = _files(tmp_path, user="[ml-cluster\nnot toml")
    with pytest.raises(UsageError, match="cannot be read as TOML"):
        resolve_target("ml-cluster", {}, environ, cwd)
    big = tmp_path / "big.toml"
    big.write_text("x = 1\n" * 200_000)
    with pytest.raises(ConfigFileError, match="larger than"):
        environments(big)


def test_the_user_s_file_is_under_xdg_config_home_or_home(tmp_path: Path) -> None:
    assert user_config_file({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "hyperpod-ha" / "samconfig.toml"
    assert user_config_file({"HYPERPOD_HA_CONFIG": "/etc/hp.toml"}) == Path("/etc/hp.toml")
    assert user_config_file({}) == Path.home() / ".config" / "hyperpod-ha" / "samconfig.toml"


@mock_aws
def test_a_stack_that_watches_another_cluster_or_none_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    saved = boto3.DEFAULT_SESSION
    try:
        connect(Target("ml-cluster", "hp", "us-east-1", None, {"stack_name": "--stack-name"}))
        cloudformation = boto3.client("cloudformation")
        cloudformation.create_stack(
            StackName="hp",
            TemplateBody='{"Parameters": {"ClusterName": {"Type": "String"}}, '
            '"Resources": {"T": {"Type": "AWS::SNS::Topic"}}}',
            Parameters=[{"ParameterKey": "ClusterName", "ParameterValue": "other-cluster"}],
        )
        target = Target("ml-cluster", "hp", "us-east-1", None, {"stack_name": "--stack-name"})
        with pytest.raises(UsageError, match="watches cluster 'other-cluster', not 'ml-cluster'"):
            stack_for_cluster(target)
        missing = Target("ml-cluster", "nothing-here", "us-east-1", None, {"stack_name": "the default name"})
        with pytest.raises(UsageError, match=r"^no stack nothing-here \(the default name\) in us-east-1"):
            stack_for_cluster(missing)
        assert stack_for_cluster(Target("other-cluster", "hp", "us-east-1", None))["ClusterName"] == (
            "other-cluster"
        )
    finally:
        boto3.DEFAULT_SESSION = saved
