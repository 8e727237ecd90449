"""``hyperpod-ha configure``'s pure parts: the template's parameter checks, what DescribeCluster
gives (the controller group's own VPC, an external accounting database, and on a cluster whose
Slurm HyperPod's API configures the controller group and its FSx mount) and how sources that
disagree are resolved (named, never picked)."""

from __future__ import annotations

import pytest

from hyperpod_ha.errors import InputRejected
from hyperpod_ha_cli.configure.discovery import (
    FsxMount,
    cluster_fsx_mounts,
    from_cluster,
    from_slurm_config,
    lifecycle_locations,
    provisioning_fsx_mounts,
)
from hyperpod_ha_cli.configure.findings import found, not_found, resolve
from hyperpod_ha_cli.configure.parameters import template_parameters, validate

SPECS = template_parameters()
SUBNET = "subnet-0123456789abcdef0"


def test_every_template_parameter_is_read_with_its_default() -> None:
    assert SPECS["DbPort"].default == "3306"
    assert not SPECS["MasterSecretArn"].required
    # The rotation's database and network: required by the template's rules only with rotation.
    assert not any(SPECS[name].required for name in ("DbHost", "SubnetIds", "SecurityGroupIds"))
    assert {name for name, spec in SPECS.items() if spec.required} == {
        "ClusterName",
        "SlurmFailoverTopicArn",
        "DbSecretArn",
        "FileSystemId",
    }


@pytest.mark.parametrize(
    ("name", "value", "kept"),
    [
        ("SubnetIds", f"{SUBNET}, subnet-89abcdef", f"{SUBNET},subnet-89abcdef"),
        ("SecurityGroupIds", "sg-0123456789abcdef0", "sg-0123456789abcdef0"),
        ("FileSystemId", "fs-0123456789abcdef0", "fs-0123456789abcdef0"),
        ("DbPort", "3307", "3307"),
        ("LogRetentionDays", "14", "14"),
        ("CommandTransport", "run-command", "run-command"),
    ],
)
def test_values_the_template_accepts(name: str, value: str, kept: str) -> None:
    assert validate(SPECS[name], value) == kept


@pytest.mark.parametrize(
    ("name", "value", "reason"),
    [
        ("SubnetIds", "subnet-xyz", "does not match"),
        ("SubnetIds", f"{SUBNET},", "an empty item"),
        ("SecurityGroupIds", SUBNET, "does not match"),
        ("DbHost", "db;host", "does not match"),
        ("FileSystemId", "fs-123", "does not match"),
        ("DbPort", "many", "is not a number"),
        ("DbPort", "NaN", "is not a number"),
        ("SettleSeconds", "3601", "above the maximum 3600"),
        ("LogRetentionDays", "15", "is not one of"),
        ("CommandTransport", "ssh", "is not one of"),
        ("DbHost", "db host", "no spaces, quotes or backslashes"),
        ("DbHost", 'db"', "no spaces, quotes or backslashes"),
        ("DbHost", "d" * 5000, "longer than 4096"),
    ],
)
def test_values_the_template_refuses(name: str, value: str, reason: str) -> None:
    with pytest.raises(InputRejected, match=reason):
        validate(SPECS[name], value)


def _cluster(**controller: object) -> dict[str, object]:
    lifecycle = {"SourceS3Uri": "s3://sagemaker-lc/src", "OnCreate": "on_create.sh"}
    return {
        "ClusterName": "ml-cluster",
        "InstanceGroups": [
            {"InstanceGroupName": "controller-machine", "LifeCycleConfig": lifecycle, **controller},
            {"InstanceGroupName": "compute", "LifeCycleConfig": lifecycle},
        ],
        "VpcConfig": {"Subnets": [SUBNET], "SecurityGroupIds": ["sg-0123456789abcdef0"]},
    }


def test_the_controller_groups_own_vpc_comes_first() -> None:
    override = {"Subnets": ["subnet-89abcdef"], "SecurityGroupIds": ["sg-89abcdef"]}
    findings = {
        f.parameter: f for f in from_cluster(_cluster(OverrideVpcConfig=override), "controller-machine")
    }
    assert findings["SubnetIds"].value == "subnet-89abcdef"
    assert (
        findings["SecurityGroupIds"].source
        == "DescribeCluster InstanceGroups[controller-machine].OverrideVpcConfig"
    )
    plain = {f.parameter: f for f in from_cluster(_cluster(), "controller-machine")}
    assert plain["SubnetIds"].value == SUBNET
    assert plain["SubnetIds"].source == "DescribeCluster VpcConfig"


def test_a_cluster_without_a_vpc_names_what_is_missing() -> None:
    cluster = _cluster()
    del cluster["VpcConfig"]
    findings = {f.parameter: f for f in from_cluster(cluster, None)}
    assert findings["SubnetIds"].value is None
    assert findings["SubnetIds"].reason == "the cluster has no VpcConfig.Subnets"


def test_an_external_accounting_database_gives_host_port_and_secret() -> None:
    cluster = _cluster()
    secret = "arn:aws:secretsmanager:us-east-1:123456789012:secret:slurmdb-AbCdEf"
    database = {"Endpoint": "db.internal", "Port": 3307, "Name": "slurm_acct_db", "SecretArn": secret}
    cluster["Orchestrator"] = {"Slurm": {"AccountingDatabase": database}}
    findings = {f.parameter: f.value for f in from_cluster(cluster, None)}
    assert (findings["DbHost"], findings["DbPort"], findings["DbSecretArn"]) == (
        "db.internal",
        "3307",
        secret,
    )


LUSTRE = {"FsxLustreConfig": {"DnsName": "fs-1.fsx.us-east-1.amazonaws.com", "MountName": "abc"}}


def test_the_controller_group_is_the_one_slurm_config_names_controller() -> None:
    cluster = _cluster(SlurmConfig={"NodeType": "Controller"}, InstanceStorageConfigs=[LUSTRE])
    cluster["InstanceGroups"][1]["SlurmConfig"] = {"NodeType": "Compute", "PartitionNames": ["dev"]}
    cluster["InstanceGroups"][1]["InstanceStorageConfigs"] = [
        {"FsxLustreConfig": {"DnsName": "other.fsx.us-east-1.amazonaws.com"}}
    ]
    (finding,) = from_slurm_config(cluster)
    assert (finding.value, finding.source) == (
        "controller-machine",
        "DescribeCluster InstanceGroups[controller-machine].SlurmConfig.NodeType",
    )
    # Only the controller group's own mount: the compute group's file system is not slurmctld's.
    assert cluster_fsx_mounts(cluster, "controller-machine") == [
        FsxMount(
            "DescribeCluster InstanceGroups[controller-machine].InstanceStorageConfigs[0]",
            "fs-1.fsx.us-east-1.amazonaws.com",
            "abc",
        )
    ]
    assert cluster_fsx_mounts(cluster, None) == []


def test_a_cluster_configured_by_its_lifecycle_scripts_gives_no_controller_group_here() -> None:
    assert from_slurm_config(_cluster()) == []
    assert cluster_fsx_mounts(_cluster(), "controller-machine") == []


def test_two_controller_groups_are_two_answers() -> None:
    cluster = _cluster(SlurmConfig={"NodeType": "Controller"})
    cluster["InstanceGroups"][1]["SlurmConfig"] = {"NodeType": "Controller"}
    resolved, unresolved = resolve(from_slurm_config(cluster))
    assert "ControllerGroupName" not in resolved
    assert unresolved["ControllerGroupName"].conflict


def test_a_provisioning_file_without_a_file_system_is_named() -> None:
    mounts, unnamed = provisioning_fsx_mounts(
        [
            ("s3://a/provisioning_parameters.json", {"fsx_dns_name": "fs.example"}),
            ("s3://b/provisioning_parameters.json", {}),
            ("s3://c/provisioning_parameters.json", {"fsx_dns_name": "fs.example", "fsx_mountname": 7}),
        ]
    )
    assert mounts == [FsxMount("s3://a/provisioning_parameters.json", "fs.example", None)]
    assert [(f.source, f.reason) for f in unnamed] == [
        ("s3://b/provisioning_parameters.json", "no fsx_dns_name"),
        ("s3://c/provisioning_parameters.json", "fsx_mountname is not a string"),
    ]


def test_lifecycle_locations_are_each_read_once() -> None:
    assert lifecycle_locations(_cluster()) == ["s3://sagemaker-lc/src"]


def test_sources_that_agree_give_the_value_and_both_sources() -> None:
    resolved, unresolved = resolve([found("DbHost", "a", "db"), found("DbHost", "b", "db")])
    assert resolved["DbHost"].value == "db"
    assert resolved["DbHost"].source == "a and b"
    assert not unresolved


def test_sources_that_disagree_are_named_and_neither_is_taken() -> None:
    resolved, unresolved = resolve(
        [
            found("DbHost", "the cluster", "db1"),
            found("DbHost", "the stack", "db2"),
            not_found("DbHost", "c", "no"),
        ]
    )
    assert "DbHost" not in resolved
    assert unresolved["DbHost"].conflict
    assert unresolved["DbHost"].reason == "the sources disagree: the cluster says db1; the stack says db2"


def test_a_value_no_source_has_keeps_every_reason() -> None:
    _, unresolved = resolve(
        [not_found("FileSystemId", "s3://x", "no fsx_dns_name"), not_found("FileSystemId", "FSx", "denied")]
    )
    assert unresolved["FileSystemId"].reason == "s3://x: no fsx_dns_name; FSx: denied"
    assert not unresolved["FileSystemId"].conflict
