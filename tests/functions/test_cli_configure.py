"""``hyperpod-ha configure`` on moto: everything found, values missing (named, or asked on stdin),
a malformed provisioning file, an FSx name that matches nothing exactly, the samconfig file's
other environments kept, ``--force``."""

from __future__ import annotations

import io
import json
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.functions.configure_account import (
    BUCKET,
    CLUSTER,
    PROVISIONING_KEY,
    REGION,
    Account,
    as_configured_through_the_api,
    configure,
    moto_account,
    put_provisioning,
    sam_view,
)


@pytest.fixture
def account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Account]:
    yield from moto_account(tmp_path, monkeypatch)


def test_everything_found_writes_the_clusters_environment(
    account: Account, capsys: pytest.CaptureFixture[str]
) -> None:
    before = account.config_file.read_text()

    assert configure(account, "--no-input") == 0

    settings, overrides = sam_view(account.config_file, CLUSTER)
    assert overrides == {
        "ClusterName": CLUSTER,
        "ControllerGroupName": "controller-machine-group",
        "SlurmFailoverTopicArn": account.topic_arn,
        "DbSecretArn": account.secret_arn,
        "DbHost": "slurmdb.abcdefghij.us-east-1.rds.amazonaws.com",
        "FileSystemId": account.file_system_id,
        "SubnetIds": ",".join(account.subnets),
        "SecurityGroupIds": account.security_group,
    }
    assert {
        key: settings[key]
        for key in ("stack_name", "region", "capabilities", "confirm_changeset", "resolve_s3")
    } == {
        "stack_name": f"hyperpod-ha-{CLUSTER}",
        "region": REGION,
        "capabilities": "CAPABILITY_IAM",
        "confirm_changeset": True,
        "resolve_s3": True,
    }
    written = account.config_file.read_text()
    assert written.startswith(before)  # the default environment and its comments, as they were
    assert tomllib.loads(written)["default"] == tomllib.loads(before)["default"]
    out = capsys.readouterr().out
    assert f"FileSystemId = {account.file_system_id}  (from FSx DescribeFileSystems" in out
    assert "ControllerGroupName = controller-machine-group  (from s3://" in out
    assert (
        "DbHost = slurmdb.abcdefghij.us-east-1.rds.amazonaws.com"
        "  (from stack sagemaker-hyperpod-multihead output SlurmDBEndpointAddress)" in out
    )
    assert "SlurmDBUsername: admin" in out
    assert f"sam deploy --config-file {account.config_file.resolve()} --config-env {CLUSTER}" in out
    # The roll-out guard names the stack's alarms and the controller group found.
    assert "aws sagemaker update-cluster-software --cluster-name " in out
    assert f"hyperpod-ha-{CLUSTER}.VerificationExecutionsFailedAlarm" in out
    assert "--instance-groups InstanceGroupName=controller-machine-group" in out


def test_a_stack_name_of_ones_own(account: Account) -> None:
    assert configure(account, "--no-input", "--stack-name", "ha-for-ml") == 0
    assert sam_view(account.config_file, CLUSTER)[0]["stack_name"] == "ha-for-ml"


def test_missing_values_are_named_and_nothing_is_written(
    account: Account, capsys: pytest.CaptureFixture[str]
) -> None:
    before = account.config_file.read_text()

    assert configure(account, "--no-input", multihead=False) == 2

    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1
    for name in ("SlurmFailoverTopicArn", "DbSecretArn"):
        assert f"{name} (the multi-head stack: no --multihead-stack given)" in error
    assert "FileSystemId" not in error
    assert "SubnetIds" not in error
    assert "DbHost" not in error  # the rotation's: required only with RotationDays (the template's rule)
    assert account.config_file.read_text() == before


def test_missing_values_are_asked_on_stdin(
    account: Account, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    typed = [
        "not-an-arn",  # refused, asked again
        account.topic_arn,
        account.secret_arn,
    ]
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(f"{line}\n" for line in typed)))

    assert configure(account, multihead=False) == 0

    overrides = sam_view(account.config_file, CLUSTER)[1]
    assert overrides["SlurmFailoverTopicArn"] == account.topic_arn
    assert overrides["DbSecretArn"] == account.secret_arn
    assert "DbHost" not in overrides  # not found, not asked: the template's empty default applies
    out = capsys.readouterr().out
    assert "refused: SlurmFailoverTopicArn: 'not-an-arn' does not match" in out
    # The two missing required values (one twice), then who is told (the end of input: nobody).
    assert out.count("> ") == 4
    assert out.count("NotificationEmail> ") == 1


def test_input_ending_before_every_value_is_given(
    account: Account, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    before = account.config_file.read_text()
    monkeypatch.setattr(sys, "stdin", io.StringIO(f"{account.topic_arn}\n"))

    assert configure(account, multihead=False) == 2

    assert "no value for DbSecretArn (end of input)" in capsys.readouterr().err
    assert account.config_file.read_text() == before


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (None, "cannot read it (NoSuchKey: The specified key does not exist.)"),
        (b"{not json", "not JSON"),
        (b'["controller_group"]', "not a JSON object"),
        (json.dumps({"workload_manager": "slurm"}).encode(), "no controller_group string"),
        (
            json.dumps({"controller_group": "head-nodes"}).encode(),
            "controller_group 'head-nodes' is not an instance group of the cluster",
        ),
        (b" " * (64 * 1024 + 1), "larger than 65536 bytes"),
    ],
)
def test_a_malformed_provisioning_file_names_what_it_should_have_given(
    account: Account, capsys: pytest.CaptureFixture[str], content: bytes | None, reason: str
) -> None:
    put_provisioning(content)

    assert configure(account, "--no-input") == 2

    error = capsys.readouterr().err
    assert f"ControllerGroupName (s3://{BUCKET}/{PROVISIONING_KEY}: {reason}" in error
    # The template's default names no group of this cluster, so it is not taken either.
    assert "the default 'controller-machine' is not a group of the cluster" in error


def test_a_file_system_that_cannot_be_matched_exactly_is_asked_for(
    account: Account, capsys: pytest.CaptureFixture[str]
) -> None:
    put_provisioning(
        {
            "controller_group": "controller-machine-group",
            "fsx_dns_name": account.dns_name,
            "fsx_mountname": "other",
        }
    )

    assert configure(account, "--no-input") == 2

    error = capsys.readouterr().err
    assert (
        "FileSystemId (FSx DescribeFileSystems: 0 file systems with "
        f"DNS name {account.dns_name} and mount name other)" in error
    )


API_NODE_TYPES = {
    "controller-machine-group": "Controller",
    "login-group": "Login",
    "compute-nodes": "Compute",
}


def test_a_cluster_configured_through_the_api_is_found_without_provisioning_parameters(
    account: Account, capsys: pytest.CaptureFixture[str]
) -> None:
    as_configured_through_the_api(account, API_NODE_TYPES)

    assert configure(account, "--no-input") == 0

    overrides = sam_view(account.config_file, CLUSTER)[1]
    assert overrides["ControllerGroupName"] == "controller-machine-group"
    assert overrides["FileSystemId"] == account.file_system_id
    out = capsys.readouterr().out
    assert (
        "ControllerGroupName = controller-machine-group  (from DescribeCluster "
        "InstanceGroups[controller-machine-group].SlurmConfig.NodeType)" in out
    )
    assert (
        f"FileSystemId = {account.file_system_id}  (from FSx DescribeFileSystems (DNS name of "
        "DescribeCluster InstanceGroups[controller-machine-group].InstanceStorageConfigs[0]))" in out
    )


def test_two_controller_groups_are_asked_for_not_picked(
    account: Account, capsys: pytest.CaptureFixture[str]
) -> None:
    as_configured_through_the_api(account, {**API_NODE_TYPES, "login-group": "Controller"})

    assert configure(account, "--no-input") == 2

    error = capsys.readouterr().err
    assert "ControllerGroupName (the sources disagree: DescribeCluster" in error
    assert "FileSystemId" in error  # which group's file system is not known either


def test_an_existing_environment_is_kept_unless_forced(
    account: Account, capsys: pytest.CaptureFixture[str]
) -> None:
    assert configure(account, "--no-input") == 0
    first = account.config_file.read_text()

    assert configure(account, "--no-input", "--stack-name", "another") == 2
    assert "already has environment 'ml-cluster' (--force replaces it)" in capsys.readouterr().err
    assert account.config_file.read_text() == first

    assert configure(account, "--no-input", "--stack-name", "another", "--force") == 0
    written = tomllib.loads(account.config_file.read_text())
    assert written[CLUSTER]["deploy"]["parameters"]["stack_name"] == "another"
    assert written["default"] == tomllib.loads(first)["default"]
    assert account.config_file.read_text().count(f"[{CLUSTER}.deploy.parameters]") == 1


def test_other_clusters_environments_stay(account: Account) -> None:
    account.config_file.write_text(
        account.config_file.read_text()
        + '\n# the other cluster\n[other.deploy.parameters]\nstack_name = "hyperpod-ha-other"\n'
    )

    assert configure(account, "--no-input") == 0

    text = account.config_file.read_text()
    assert "# the other cluster" in text
    assert tomllib.loads(text)["other"] == {"deploy": {"parameters": {"stack_name": "hyperpod-ha-other"}}}
