"""What the stack watches but does not own, stood in on moto: the HyperPod cluster with its
controllers, the cluster's failover topic, the database secret, the FSx file system, the VPC.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

import boto3
import botocore.loaders
from moto.core.config import DefaultConfig

from hyperpod_ha_dev.embedded.account import ACCOUNT, CREDENTIALS, REGION

MOTO_CONFIG: DefaultConfig = {
    "stepfunctions": {"execute_state_machine": True},
    "lambda": {"use_docker": False},
    "core": {"mock_credentials": True, "passthrough": {"urls": [], "services": []}},
}


_SEED = 20261206

# No EC2 images: nothing here starts an instance, and moto reads its image lists at every start.
_MOTO_ENVIRONMENT = {"MOTO_EC2_LOAD_DEFAULT_AMIS": "false"}


@functools.cache
def _shared_loader(search_paths: str | None = None) -> botocore.loaders.Loader:
    """One botocore loader for every session: moto gives each start a new boto3 session, whose
    own loader would read each service's model again (about 20 ms a client)."""
    return botocore.loaders.create_loader(search_paths)


@functools.cache
def _unused_private_key() -> Any:
    from moto.kms.utils import RSAPrivateKey

    return RSAPrivateKey(key_size=2048)


def _private_key(key_spec: str) -> Any:
    """moto gives every KMS key a new RSA key pair, a symmetric key too, which never uses it
    (about 40 ms each, two keys a stack): those share one; an asymmetric key gets its own."""
    from moto.kms.utils import generate_private_key

    if key_spec == "SYMMETRIC_DEFAULT":
        return _unused_private_key()
    return generate_private_key(key_spec)


@contextlib.contextmanager
def embedded_aws() -> Iterator[None]:
    """An in-process AWS (moto) with the real handlers answering Lambda invocations."""
    from moto import mock_aws
    from moto.moto_api._internal import mock_random

    from hyperpod_ha_dev.embedded import definition_cache, delivery, sfn_integration

    # moto's interpreter logs every state's internals at WARNING; keep our output readable.
    logging.getLogger("moto.stepfunctions").setLevel(logging.CRITICAL)
    with (
        mock.patch.dict(os.environ, {**CREDENTIALS, **_MOTO_ENVIRONMENT}),
        mock.patch("botocore.session.create_loader", _shared_loader),
        mock.patch("moto.kms.models.generate_private_key", _private_key),
    ):
        # Never a real account or another endpoint, whatever the shell says.
        os.environ.pop("AWS_ENDPOINT_URL", None)
        os.environ.pop("AWS_PROFILE", None)
        with (
            mock_aws(config=MOTO_CONFIG),
            delivery.patched(),
            sfn_integration.patched(),
            definition_cache.patched(),
            # moto's FSx alone draws its IDs from uuid, not from its own (seeded) random.
            mock.patch("moto.fsx.models.uuid4", mock_random.uuid4),
        ):
            # The same IDs (VPC, secret suffix, file system) in every embedded AWS: runs are
            # repeatable, and the stack's translation, keyed by its parameters, is made once.
            mock_random.seed(_SEED)
            yield


@dataclass(frozen=True)
class SiteController:
    instance_id: str
    private_ip: str
    hostname: str


@dataclass
class Site:
    cluster_name: str
    cluster_arn: str
    controller_group: str
    controllers: list[SiteController]
    failover_topic_arn: str
    secret_arn: str
    file_system_id: str
    subnet_ids: list[str]
    security_group_ids: list[str]
    db_host: str
    db_port: int
    extra_parameters: dict[str, Any] = field(default_factory=dict)

    def stack_parameters(self) -> dict[str, Any]:
        return {
            "ClusterName": self.cluster_name,
            "ControllerGroupName": self.controller_group,
            "SlurmFailoverTopicArn": self.failover_topic_arn,
            "DbSecretArn": self.secret_arn,
            "DbHost": self.db_host,
            "DbPort": self.db_port,
            "FileSystemId": self.file_system_id,
            "SubnetIds": self.subnet_ids,
            "SecurityGroupIds": self.security_group_ids,
            **self.extra_parameters,
        }

    def add_cluster_event(self, record: dict[str, Any]) -> None:
        """A record DescribeClusterEvent returns (botocore's ``ClusterEventDetail``)."""
        from hyperpod_ha_dev.embedded.cluster_records import add_event

        add_event(_sagemaker_backend(), self.cluster_name, record)

    def set_orchestrator(self, orchestrator: dict[str, Any] | None) -> None:
        """DescribeCluster's ``Orchestrator`` (``{"Slurm": {...}}``); ``None``: none given."""
        from hyperpod_ha_dev.embedded.cluster_records import set_orchestrator

        set_orchestrator(_sagemaker_backend(), self.cluster_name, orchestrator)

    def set_cluster_status(self, status: str) -> None:
        """SageMaker's ClusterStatus (InService, SystemUpdating, Updating, ...)."""
        _sagemaker_backend().clusters[self.cluster_name].status = status

    def set_controller_status(self, instance_id: str, status: str) -> None:
        """SageMaker's view of a controller (Running, Failure, Pending, ...)."""
        cluster = _sagemaker_backend().clusters[self.cluster_name]
        cluster.nodes[instance_id].status = status


def rebooted_nodes(cluster_name: str) -> list[str]:
    """The nodes of the embedded cluster BatchRebootClusterNodes was asked to reboot."""
    from hyperpod_ha_dev.embedded.cluster_records import rebooted

    return rebooted(_sagemaker_backend(), cluster_name)


DEFAULT_CONTROLLERS = (
    SiteController("i-0a1b2c3d4e5f60001", "10.1.0.11", "ip-10-1-0-11"),
    SiteController("i-0a1b2c3d4e5f60002", "10.1.0.12", "ip-10-1-0-12"),
)


def create_site(
    cluster_name: str = "ml-cluster",
    controller_group: str = "controller-machine",
    controllers: tuple[SiteController, ...] = DEFAULT_CONTROLLERS,
    workers: int = 16,
    secret: dict[str, Any] | None = None,
    db_host: str = "127.0.0.1",
    db_port: int = 3306,
) -> Site:
    """Create the stand-ins on moto; call inside :func:`embedded_aws`."""
    ec2 = boto3.client("ec2", region_name=REGION)
    vpc = ec2.create_vpc(CidrBlock="10.1.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.1.0.0/20")["Subnet"]["SubnetId"]
    group = ec2.create_security_group(
        GroupName="hyperpod-ha-db-clients", Description="db clients", VpcId=vpc
    )["GroupId"]

    sns = boto3.client("sns", region_name=REGION)
    topic = sns.create_topic(Name=f"{cluster_name}-slurm-failover")["TopicArn"]

    secretsmanager = boto3.client("secretsmanager", region_name=REGION)
    secret_value = secret or {"username": "slurm_admin", "password": "Initial-Password-0"}
    secret_arn = secretsmanager.create_secret(
        Name=f"{cluster_name}-slurmdbd", SecretString=json.dumps(secret_value, separators=(",", ":"))
    )["ARN"]

    fsx = boto3.client("fsx", region_name=REGION)
    file_system = fsx.create_file_system(
        FileSystemType="LUSTRE",
        StorageCapacity=1200,
        SubnetIds=[subnet],
        LustreConfiguration={"DeploymentType": "PERSISTENT_2", "PerUnitStorageThroughput": 125},
    )["FileSystem"]["FileSystemId"]

    cluster_arn = _create_cluster(cluster_name, controller_group, controllers, workers)
    return Site(
        cluster_name=cluster_name,
        cluster_arn=cluster_arn,
        controller_group=controller_group,
        controllers=list(controllers),
        failover_topic_arn=topic,
        secret_arn=secret_arn,
        file_system_id=file_system,
        subnet_ids=[subnet],
        security_group_ids=[group],
        db_host=db_host,
        db_port=db_port,
    )


def _sagemaker_backend() -> Any:
    from moto.sagemaker.models import sagemaker_backends

    return sagemaker_backends[ACCOUNT][REGION]


def _create_cluster(name: str, group: str, controllers: tuple[SiteController, ...], workers: int) -> str:

    def instance_group(group_name: str, count: int) -> dict[str, Any]:
        return {
            "InstanceGroupName": group_name,
            "InstanceType": "ml.m5.xlarge",
            "InstanceCount": count,
            "LifeCycleConfig": {
                "SourceS3Uri": "s3://sagemaker-lifecycle/scripts/",
                "OnCreate": "on_create.sh",
            },
            "ExecutionRole": "arn:aws:iam::123456789012:role/hyperpod-nodes",
            "ThreadsPerCore": 1,
        }

    sagemaker = boto3.client("sagemaker", region_name=REGION)
    arn = sagemaker.create_cluster(
        ClusterName=name,
        InstanceGroups=[instance_group(group, len(controllers)), instance_group("worker-group-1", workers)],  # type: ignore[list-item]
    )["ClusterArn"]
    cluster = _sagemaker_backend().clusters[name]
    # moto names nodes "<group>-<n>" and knows no addresses: give them HyperPod's shape.
    renamed: dict[str, Any] = {}
    workers_seen = 0
    for node in list(cluster.nodes.values()):
        if node.instance_group_name == group:
            site = controllers[len([n for n in renamed.values() if n.instance_group_name == group])]
            instance_id, ip, hostname = site.instance_id, site.private_ip, site.hostname
        else:
            workers_seen += 1
            instance_id = f"i-0f0f0f0f0f0f{workers_seen:05d}"
            ip = f"10.1.4.{workers_seen}"
            hostname = f"ip-10-1-4-{workers_seen}"
        node.instance_id = instance_id
        node.private_ip = ip
        node.hostname = hostname
        renamed[instance_id] = node
    cluster.nodes = renamed
    return str(arn)
