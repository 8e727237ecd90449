"""The account ``hyperpod-ha configure``'s tests run against, on moto: a cluster and a multi-head
stack shaped as the public sample's (its outputs, ``provisioning_parameters.json`` beside the
lifecycle scripts, an FSx for Lustre file system), and how the tests run the command and read
what it wrote (with SAM CLI's own reader)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from hyperpod_ha_cli.main import main
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


def moto_account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Account]:
    """The account, for a test module's ``account`` fixture (``yield from``)."""
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
        put_provisioning(
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


def as_configured_through_the_api(account: Account, node_types: dict[str, str]) -> None:
    """The cluster as HyperPod's API configures its Slurm (its migration guide removes
    provisioning_parameters.json): each group's ``SlurmConfig.NodeType`` from ``node_types``, the
    FSx for Lustre file system mounted by ``InstanceStorageConfigs``, no provisioning file."""
    put_provisioning(None)
    sagemaker = boto3.client("sagemaker", region_name=REGION)
    groups = sagemaker.describe_cluster(ClusterName=CLUSTER)["InstanceGroups"]
    sagemaker.delete_cluster(ClusterName=CLUSTER)
    lustre = {"FsxLustreConfig": {"DnsName": account.dns_name, "MountName": MOUNT_NAME, "MountPath": "/fsx"}}
    sagemaker.create_cluster(
        ClusterName=CLUSTER,
        InstanceGroups=[
            {
                **_group(group["InstanceGroupName"], group["InstanceType"], group["TargetCount"]),
                "SlurmConfig": {"NodeType": node_types[group["InstanceGroupName"]]},
                "InstanceStorageConfigs": [lustre],
            }
            for group in groups
        ],
        VpcConfig={"SecurityGroupIds": [account.security_group], "Subnets": account.subnets},
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


def put_provisioning(content: Any) -> None:
    if content is None:
        boto3.client("s3", region_name=REGION).delete_object(Bucket=BUCKET, Key=PROVISIONING_KEY)
        return
    body = content if isinstance(content, bytes) else json.dumps(content).encode()
    boto3.client("s3", region_name=REGION).put_object(Bucket=BUCKET, Key=PROVISIONING_KEY, Body=body)


def configure(account: Account, *extra: str, multihead: bool = True) -> int:
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


def sam_view(config_file: Path, environment: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The environment's deploy settings and parameter overrides as SAM CLI reads them."""
    from samcli.cli.types import CfnParameterOverridesType
    from samcli.lib.config.samconfig import SamConfig

    settings = SamConfig(str(config_file.parent), config_file.name).get_all(
        ["deploy"], "parameters", env=environment
    )
    overrides = CfnParameterOverridesType().convert(settings["parameter_overrides"], None, None)
    return settings, overrides
