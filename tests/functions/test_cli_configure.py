"""``hyperpod-ha configure`` on moto: a cluster and a multi-head stack shaped as the public
sample's (its outputs, ``provisioning_parameters.json`` beside the lifecycle scripts, an FSx
for Lustre file system); the samconfig environment it writes, read back by SAM CLI itself."""

from __future__ import annotations

import io
import json
import shutil
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from hyperpod_ha_dev.cli import main
from tests.conftest import ROOT

REGION = "us-east-1"
CLUSTER = "ml-cluster"
BUCKET = "sagemaker-lifecycle-0123abcd"
LIFECYCLE = f"s3://{BUCKET}/src/"
PROVISIONING_KEY = "src/provisioning_parameters.json"
MOUNT_NAME = "abcdefgh"
# The multi-head sample stack's outputs as the public sample names them. moto's CloudFormation has
# no AWS::SecretsManager::Secret, so the secret is made first and passed in.
MULTIHEAD_TEMPLATE = {
    "Parameters": {"SlurmDBSecret": {"Type": "String"}},
    "Resources": {
        "SlurmFailOverSNSTopic": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": "slurm-failover"}},
    },
    "Outputs": {
        "SlurmFailOverSNSTopicArn": {"Value": {"Ref": "SlurmFailOverSNSTopic"}},
        "SlurmDBSecretArn": {"Value": {"Ref": "SlurmDBSecret"}},
        "SlurmDBEndpointAddress": {"Value": "slurmdb.abcdefghij.us-east-1.rds.amazonaws.com"},
        "SlurmDBUsername": {"Value": "admin"},
    },
}


@dataclass(frozen=True)
class Account:
    """What the test account holds: the values configure should find."""

    subnets: list[str]
    security_group: str
    file_system_id: str
    dns_name: str
    topic_arn: str
    secret_arn: str
    config_file: Path


@pytest.fixture
def account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Account]:
    monkeypatch.chdir(ROOT)  # template.yaml is found from the working directory
    with mock_aws():
        ec2 = boto3.client("ec2", region_name=REGION)
        vpc = ec2.create_vpc(CidrBlock="10.1.0.0/16")["Vpc"]["VpcId"]
        subnets = [
            ec2.create_subnet(VpcId=vpc, CidrBlock=cidr)["Subnet"]["SubnetId"]
            for cidr in ("10.1.0.0/24", "10.1.1.0/24")
        ]
        group = ec2.create_security_group(GroupName="hyperpod", Description="cluster", VpcId=vpc)["GroupId"]
        fsx = boto3.client("fsx", region_name=REGION)
        system = fsx.create_file_system(
            FileSystemType="LUSTRE",
            StorageCapacity=1200,
            SubnetIds=subnets[:1],
            LustreConfiguration={"DeploymentType": "PERSISTENT_2", "PerUnitStorageThroughput": 125},
        )["FileSystem"]
        _set_mount_name(system["FileSystemId"])
        # A second file system, so the lookup must pick by DNS name, not take the only one.
        fsx.create_file_system(FileSystemType="LUSTRE", StorageCapacity=1200, SubnetIds=subnets[1:])
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET)
        _put_provisioning(
            {
                "version": "1.0.0",
                "workload_manager": "slurm",
                "controller_group": "controller-machine-group",
                "login_group": "login-group",
                "worker_groups": [{"instance_group_name": "compute-nodes", "partition_name": "dev"}],
                "fsx_dns_name": system["DNSName"],
                "fsx_mountname": MOUNT_NAME,
            }
        )
        boto3.client("sagemaker", region_name=REGION).create_cluster(
            ClusterName=CLUSTER,
            InstanceGroups=[
                _group("controller-machine-group", "ml.m5.xlarge", 2),
                _group("login-group", "ml.m5.xlarge", 1),
                _group("compute-nodes", "ml.g5.xlarge", 4),
            ],
            VpcConfig={"SecurityGroupIds": [group], "Subnets": subnets},
        )
        cloudformation = boto3.client("cloudformation", region_name=REGION)
        secret = boto3.client("secretsmanager", region_name=REGION).create_secret(
            Name="slurmdb-secret", SecretString='{"username":"admin","password":"x"}'
        )["ARN"]
        cloudformation.create_stack(
            StackName="sagemaker-hyperpod-multihead",
            TemplateBody=json.dumps(MULTIHEAD_TEMPLATE),
            Parameters=[{"ParameterKey": "SlurmDBSecret", "ParameterValue": secret}],
        )
        outputs = {
            o["OutputKey"]: o["OutputValue"]
            for o in cloudformation.describe_stacks(StackName="sagemaker-hyperpod-multihead")["Stacks"][0][
                "Outputs"
            ]
        }
        config_file = tmp_path / "samconfig.toml"
        shutil.copy(ROOT / "samconfig.toml", config_file)
        yield Account(
            subnets,
            group,
            system["FileSystemId"],
            system["DNSName"],
            outputs["SlurmFailOverSNSTopicArn"],
            outputs["SlurmDBSecretArn"],
            config_file,
        )


def _group(name: str, instance_type: str, count: int) -> Any:
    return {
        "InstanceGroupName": name,
        "InstanceType": instance_type,
        "InstanceCount": count,
        "LifeCycleConfig": {"SourceS3Uri": LIFECYCLE, "OnCreate": "on_create.sh"},
        "ExecutionRole": "arn:aws:iam::123456789012:role/hyperpod-execution",
        "ThreadsPerCore": 1,
    }


def _set_mount_name(file_system_id: str) -> None:
    """FSx assigns MountName itself (CreateFileSystem takes none); moto leaves it out."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.fsx.models import fsx_backends

    system = fsx_backends[DEFAULT_ACCOUNT_ID][REGION].file_systems[file_system_id]
    system.lustre_configuration = {**(system.lustre_configuration or {}), "MountName": MOUNT_NAME}


def _put_provisioning(content: Any) -> None:
    if content is None:
        boto3.client("s3", region_name=REGION).delete_object(Bucket=BUCKET, Key=PROVISIONING_KEY)
        return
    body = content if isinstance(content, bytes) else json.dumps(content).encode()
    boto3.client("s3", region_name=REGION).put_object(Bucket=BUCKET, Key=PROVISIONING_KEY, Body=body)


def _configure(account: Account, *extra: str, multihead: bool = True) -> int:
    stack = ["--multihead-stack", "sagemaker-hyperpod-multihead"] if multihead else []
    return main(
        [
            "configure",
            "--cluster",
            CLUSTER,
            "--region",
            REGION,
            "--config-file",
            str(account.config_file),
            *stack,
            *extra,
        ]
    )


def _sam_view(config_file: Path, environment: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The environment's deploy settings and parameter overrides as SAM CLI reads them."""
    from samcli.cli.types import CfnParameterOverridesType
    from samcli.lib.config.samconfig import SamConfig

    settings = SamConfig(str(config_file.parent), config_file.name).get_all(
        ["deploy"], "parameters", env=environment
    )
    overrides = CfnParameterOverridesType().convert(settings["parameter_overrides"], None, None)
    return settings, overrides


def test_everything_found_writes_the_clusters_environment(
    account: Account, capsys: pytest.CaptureFixture[str]
) -> None:
    before = account.config_file.read_text()

    assert _configure(account, "--no-input") == 0

    settings, overrides = _sam_view(account.config_file, CLUSTER)
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
    assert f"sam deploy --config-env {CLUSTER}" in out


def test_a_stack_name_of_ones_own(account: Account) -> None:
    assert _configure(account, "--no-input", "--stack-name", "ha-for-ml") == 0
    assert _sam_view(account.config_file, CLUSTER)[0]["stack_name"] == "ha-for-ml"


def test_missing_values_are_named_and_nothing_is_written(
    account: Account, capsys: pytest.CaptureFixture[str]
) -> None:
    before = account.config_file.read_text()

    assert _configure(account, "--no-input", multihead=False) == 2

    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1
    for name in ("SlurmFailoverTopicArn", "DbSecretArn", "DbHost"):
        assert f"{name} (the multi-head stack: no --multihead-stack given)" in error
    assert "FileSystemId" not in error
    assert "SubnetIds" not in error
    assert account.config_file.read_text() == before


def test_missing_values_are_asked_on_stdin(
    account: Account, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    typed = [
        "not-an-arn",  # refused, asked again
        account.topic_arn,
        account.secret_arn,
        "db.example.internal",
    ]
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(f"{line}\n" for line in typed)))

    assert _configure(account, multihead=False) == 0

    overrides = _sam_view(account.config_file, CLUSTER)[1]
    assert overrides["SlurmFailoverTopicArn"] == account.topic_arn
    assert overrides["DbSecretArn"] == account.secret_arn
    assert overrides["DbHost"] == "db.example.internal"
    out = capsys.readouterr().out
    assert "refused: SlurmFailoverTopicArn: 'not-an-arn' does not match" in out
    assert out.count("> ") == 4  # only the three missing values were asked (one twice)


def test_input_ending_before_every_value_is_given(
    account: Account, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    before = account.config_file.read_text()
    monkeypatch.setattr(sys, "stdin", io.StringIO(f"{account.topic_arn}\n"))

    assert _configure(account, multihead=False) == 2

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
    _put_provisioning(content)

    assert _configure(account, "--no-input") == 2

    error = capsys.readouterr().err
    assert f"ControllerGroupName (s3://{BUCKET}/{PROVISIONING_KEY}: {reason}" in error
    # The template's default names no group of this cluster, so it is not taken either.
    assert "the default 'controller-machine' is not a group of the cluster" in error


def test_a_file_system_that_cannot_be_matched_exactly_is_asked_for(
    account: Account, capsys: pytest.CaptureFixture[str]
) -> None:
    _put_provisioning(
        {
            "controller_group": "controller-machine-group",
            "fsx_dns_name": account.dns_name,
            "fsx_mountname": "other",
        }
    )

    assert _configure(account, "--no-input") == 2

    error = capsys.readouterr().err
    assert (
        "FileSystemId (FSx DescribeFileSystems: 0 file systems with "
        f"DNS name {account.dns_name} and mount name other)" in error
    )


def test_an_existing_environment_is_kept_unless_forced(
    account: Account, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _configure(account, "--no-input") == 0
    first = account.config_file.read_text()

    assert _configure(account, "--no-input", "--stack-name", "another") == 2
    assert "already has environment 'ml-cluster' (--force replaces it)" in capsys.readouterr().err
    assert account.config_file.read_text() == first

    assert _configure(account, "--no-input", "--stack-name", "another", "--force") == 0
    written = tomllib.loads(account.config_file.read_text())
    assert written[CLUSTER]["deploy"]["parameters"]["stack_name"] == "another"
    assert written["default"] == tomllib.loads(first)["default"]
    assert account.config_file.read_text().count(f"[{CLUSTER}.deploy.parameters]") == 1


def test_other_clusters_environments_stay(account: Account) -> None:
    account.config_file.write_text(
        account.config_file.read_text()
        + '\n# the other cluster\n[other.deploy.parameters]\nstack_name = "hyperpod-ha-other"\n'
    )

    assert _configure(account, "--no-input") == 0

    text = account.config_file.read_text()
    assert "# the other cluster" in text
    assert tomllib.loads(text)["other"] == {"deploy": {"parameters": {"stack_name": "hyperpod-ha-other"}}}


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
    assert error.startswith("hyperpod-ha configure: cannot describe cluster no-such:")
    assert len(error.splitlines()) == 1


def test_an_unknown_profile_is_a_usage_error(account: Account, capsys: pytest.CaptureFixture[str]) -> None:
    assert _configure(account, "--profile", "no-such-profile") == 2
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
