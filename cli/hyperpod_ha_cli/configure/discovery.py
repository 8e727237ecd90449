"""Where a cluster's deploy values are found: ``DescribeCluster`` (the VPC, the accounting
database and, on a cluster whose Slurm is configured through HyperPod's API, each instance
group's ``SlurmConfig.NodeType`` and FSx for Lustre mount), the cluster's
``provisioning_parameters.json`` beside its lifecycle scripts (which HyperPod's migration to that
API removes), the FSx file system either names, and the multi-head sample stack's outputs. Each
adapter takes its boto3 client and returns findings; a source that fails says why, so its values
are named as not found."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from hyperpod_ha.errors import InputRejected
from hyperpod_ha_cli.configure.findings import Finding, found, not_found, shown

if TYPE_CHECKING:
    from mypy_boto3_cloudformation import CloudFormationClient
    from mypy_boto3_fsx import FSxClient
    from mypy_boto3_s3 import S3Client

PROVISIONING_FILE = "provisioning_parameters.json"
# The sample's file is well under 2 KiB; anything past this is not that file.
MAX_PROVISIONING_BYTES = 64 * 1024
# The multi-head sample stack's outputs, and the parameters they give.
STACK_OUTPUTS = {
    "SlurmFailOverSNSTopicArn": "SlurmFailoverTopicArn",
    "SlurmDBSecretArn": "DbSecretArn",
    "SlurmDBEndpointAddress": "DbHost",
}
USERNAME_OUTPUT = "SlurmDBUsername"  # informational: the lifecycle scripts' database user
# DescribeCluster's InstanceGroups[].SlurmConfig.NodeType of the group that runs slurmctld.
CONTROLLER_NODE_TYPE = "Controller"


@dataclass(frozen=True)
class FsxMount:
    """An FSx for Lustre file system as a source names it: DNS name, and mount name if known."""

    source: str
    dns_name: str
    mount_name: str | None


def failure(error: Exception) -> str:
    """A client error as its code and message, the other errors as their text."""
    if isinstance(error, ClientError):
        details = error.response.get("Error", {})
        return f"{details.get('Code', 'error')}: {details.get('Message', '')}".rstrip(": ")
    return str(error)


def group_names(cluster: Mapping[str, Any]) -> list[str]:
    return [str(group.get("InstanceGroupName", "")) for group in cluster.get("InstanceGroups", [])]


def from_cluster(cluster: Mapping[str, Any], controller_group: str | None) -> list[Finding]:
    """ClusterName, the VPC (the controller group's own ``OverrideVpcConfig`` when it has one:
    that is where the database is reached from) and an external accounting database."""
    findings = [found("ClusterName", "DescribeCluster", str(cluster["ClusterName"]))]
    groups = {str(group.get("InstanceGroupName")): group for group in cluster.get("InstanceGroups", [])}
    override = groups.get(controller_group or "", {}).get("OverrideVpcConfig")
    vpc, source = (
        (override, f"DescribeCluster InstanceGroups[{controller_group}].OverrideVpcConfig")
        if override
        else (cluster.get("VpcConfig"), "DescribeCluster VpcConfig")
    )
    for parameter, key in (("SubnetIds", "Subnets"), ("SecurityGroupIds", "SecurityGroupIds")):
        values = (vpc or {}).get(key) or []
        findings.append(
            found(parameter, source, ",".join(values))
            if values
            else not_found(parameter, "DescribeCluster", f"the cluster has no VpcConfig.{key}")
        )
    database = cluster.get("Orchestrator", {}).get("Slurm", {}).get("AccountingDatabase")
    if database:
        source = "DescribeCluster Orchestrator.Slurm.AccountingDatabase"
        for parameter, key in (("DbHost", "Endpoint"), ("DbPort", "Port"), ("DbSecretArn", "SecretArn")):
            if database.get(key) is not None:
                findings.append(found(parameter, source, str(database[key])))
    return findings


def from_slurm_config(cluster: Mapping[str, Any]) -> list[Finding]:
    """ControllerGroupName from the instance groups' ``SlurmConfig.NodeType`` (a cluster whose
    Slurm HyperPod's API configures); none on a cluster configured by its lifecycle scripts.
    Two controller groups are two answers, so the operator is asked rather than one picked."""
    return [
        found(
            "ControllerGroupName",
            f"DescribeCluster InstanceGroups[{group.get('InstanceGroupName')}].SlurmConfig.NodeType",
            str(group.get("InstanceGroupName")),
        )
        for group in cluster.get("InstanceGroups", [])
        if (group.get("SlurmConfig") or {}).get("NodeType") == CONTROLLER_NODE_TYPE
        and group.get("InstanceGroupName")
    ]


def cluster_fsx_mounts(cluster: Mapping[str, Any], controller_group: str | None) -> list[FsxMount]:
    """The FSx for Lustre file systems the controller group mounts (``InstanceStorageConfigs``):
    where slurmctld keeps its state when HyperPod's API set the cluster up."""
    mounts = []
    for group in cluster.get("InstanceGroups", []):
        if controller_group is None or group.get("InstanceGroupName") != controller_group:
            continue
        for index, storage in enumerate(group.get("InstanceStorageConfigs") or []):
            lustre = storage.get("FsxLustreConfig") or {}
            if lustre.get("DnsName"):
                source = f"DescribeCluster InstanceGroups[{controller_group}].InstanceStorageConfigs[{index}]"
                mounts.append(FsxMount(source, str(lustre["DnsName"]), lustre.get("MountName")))
    return mounts


def provisioning_fsx_mounts(
    files: list[tuple[str, Mapping[str, Any]]],
) -> tuple[list[FsxMount], list[Finding]]:
    """The file system each ``provisioning_parameters.json`` names, and the files that name none."""
    mounts: list[FsxMount] = []
    unnamed: list[Finding] = []
    for uri, provisioning in files:
        dns_name, mount_name = provisioning.get("fsx_dns_name"), provisioning.get("fsx_mountname")
        if not isinstance(dns_name, str) or not dns_name:
            unnamed.append(not_found("FileSystemId", uri, "no fsx_dns_name"))
        elif mount_name is not None and not isinstance(mount_name, str):
            unnamed.append(not_found("FileSystemId", uri, "fsx_mountname is not a string"))
        else:
            mounts.append(FsxMount(uri, dns_name, mount_name))
    return mounts, unnamed


def lifecycle_locations(cluster: Mapping[str, Any]) -> list[str]:
    """The instance groups' lifecycle script locations, each once, in group order."""
    uris = (
        group.get("LifeCycleConfig", {}).get("SourceS3Uri") for group in cluster.get("InstanceGroups", [])
    )
    return list(dict.fromkeys(uri for uri in uris if uri))


def provisioning_uri(source_s3_uri: str) -> str:
    return f"{source_s3_uri.rstrip('/')}/{PROVISIONING_FILE}"


def read_provisioning(s3: S3Client, uri: str) -> dict[str, Any]:
    """The JSON object at ``uri``; :class:`InputRejected` when it is not one (or too large)."""
    if not uri.startswith("s3://") or "/" not in uri[5:]:
        raise InputRejected(f"{shown(uri)} is not an s3:// object address")
    bucket, key = uri[5:].split("/", 1)
    try:
        response = s3.get_object(Bucket=bucket, Key=key)
    except (ClientError, BotoCoreError) as error:
        raise InputRejected(f"cannot read it ({failure(error)})") from None
    if response.get("ContentLength", 0) > MAX_PROVISIONING_BYTES:
        response["Body"].close()
        raise InputRejected(f"larger than {MAX_PROVISIONING_BYTES} bytes")
    body = response["Body"].read(MAX_PROVISIONING_BYTES + 1)
    if len(body) > MAX_PROVISIONING_BYTES:
        raise InputRejected(f"larger than {MAX_PROVISIONING_BYTES} bytes")
    try:
        parsed = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputRejected(f"not JSON ({error})") from None
    if not isinstance(parsed, dict):
        raise InputRejected("not a JSON object")
    return parsed


def from_provisioning(
    s3: S3Client, locations: Iterable[str], cluster_groups: list[str]
) -> tuple[list[Finding], list[tuple[str, Mapping[str, Any]]]]:
    """ControllerGroupName from each location's ``provisioning_parameters.json``, and the files
    that were read (for the FSx lookup)."""
    findings: list[Finding] = []
    files: list[tuple[str, Mapping[str, Any]]] = []
    for location in locations:
        uri = provisioning_uri(location)
        try:
            provisioning = read_provisioning(s3, uri)
        except InputRejected as error:
            findings.append(not_found("ControllerGroupName", uri, error.reason))
            continue
        files.append((uri, provisioning))
        group = provisioning.get("controller_group")
        if not isinstance(group, str) or not group:
            findings.append(not_found("ControllerGroupName", uri, "no controller_group string"))
        elif group not in cluster_groups:
            reason = f"controller_group {shown(group)!r} is not an instance group of the cluster"
            findings.append(not_found("ControllerGroupName", uri, reason))
        else:
            findings.append(found("ControllerGroupName", uri, group))
    if not findings:
        findings.append(not_found("ControllerGroupName", "DescribeCluster", "no group has a LifeCycleConfig"))
    return findings, files


def file_system_id(fsx: FSxClient, mounts: list[FsxMount]) -> list[Finding]:
    """FileSystemId: for each mount a source names, the one file system whose DNS name (and
    mount name, when given) is exactly that; the file systems are listed once."""
    if not mounts:
        return [
            not_found(
                "FileSystemId",
                "DescribeCluster and provisioning_parameters.json",
                "neither the controller group's InstanceStorageConfigs nor a provisioning_parameters.json "
                "names an FSx for Lustre file system",
            )
        ]
    try:
        systems = [
            system
            for page in fsx.get_paginator("describe_file_systems").paginate()
            for system in page["FileSystems"]
        ]
    except (ClientError, BotoCoreError) as error:
        return [not_found("FileSystemId", "FSx DescribeFileSystems", failure(error))]
    findings: list[Finding] = []
    for mount in mounts:
        matches = [
            system["FileSystemId"]
            for system in systems
            if system.get("DNSName", "").lower() == mount.dns_name.lower()
            and (
                mount.mount_name is None
                or system.get("LustreConfiguration", {}).get("MountName") == mount.mount_name
            )
        ]
        if len(matches) == 1:
            findings.append(
                found("FileSystemId", f"FSx DescribeFileSystems (DNS name of {mount.source})", matches[0])
            )
        else:
            wanted = f"DNS name {shown(mount.dns_name)}" + (
                f" and mount name {shown(mount.mount_name)}" if mount.mount_name else ""
            )
            findings.append(
                not_found(
                    "FileSystemId", "FSx DescribeFileSystems", f"{len(matches)} file systems with {wanted}"
                )
            )
    return findings


def from_stack(
    cloudformation: CloudFormationClient, stack_name: str | None
) -> tuple[list[Finding], str | None]:
    """The multi-head sample stack's topic, secret and database host, and its database user."""
    if stack_name is None:
        return [
            not_found(p, "the multi-head stack", "no --multihead-stack given") for p in STACK_OUTPUTS.values()
        ], None
    try:
        stacks = cloudformation.describe_stacks(StackName=stack_name)["Stacks"]
    except (ClientError, BotoCoreError) as error:
        return [not_found(p, f"stack {stack_name}", failure(error)) for p in STACK_OUTPUTS.values()], None
    outputs = {
        output.get("OutputKey", ""): output.get("OutputValue", "") for output in stacks[0].get("Outputs", [])
    }
    findings = [
        found(parameter, f"stack {stack_name} output {output}", outputs[output])
        if outputs.get(output)
        else not_found(parameter, f"stack {stack_name}", f"no output {output}")
        for output, parameter in STACK_OUTPUTS.items()
    ]
    return findings, outputs.get(USERNAME_OUTPUT) or None
