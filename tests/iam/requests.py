"""From an AWS call to the requests IAM authorizes: action, resource ARN, request context.

One entry per operation the functions make (:data:`OPERATIONS`); a call with none fails the suite,
so the table stays complete. The context holds the condition keys the call's parameters decide
(DynamoDB's leading keys, tags on request, KMS's encryption context) and those the resource
decides, read from the embedded stack's backends when the call is made (a resource's tags).
Keys the service sets and the stand-ins cannot know are :data:`ASSUMED` (docs/security.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hyperpod_ha_dev.embedded.account import ACCOUNT


@dataclass(frozen=True)
class Request:
    action: str
    resource: str
    context: dict[str, Any] = field(default_factory=dict)


# Keys IAM sets that no parameter decides, and what the evaluation takes them to be.
ASSUMED = {
    "ssm:resourceTag/aws:ssmmessages:session-id": "Session Manager tags each session with its starter's "
    "aws:userid: a function's own sessions carry its role session's",
}

Mapper = Callable[[dict[str, Any], str], list[Request]]


def _arn(service: str, region: str, resource: str) -> str:
    return f"arn:aws:{service}:{region}:{ACCOUNT}:{resource}"


def _value(attribute: Any) -> str:
    """A DynamoDB key value, typed (``{"S": "x"}``) or as boto3's resource layer passes it."""
    if isinstance(attribute, dict) and len(attribute) == 1:
        return str(next(iter(attribute.values())))
    return str(attribute)


def _dynamodb(action: str) -> Mapper:
    def requests(params: dict[str, Any], region: str) -> list[Request]:
        if action == "dynamodb:BatchGetItem":
            return [
                Request(
                    action,
                    _arn("dynamodb", region, f"table/{table}"),
                    {"dynamodb:LeadingKeys": [_value(key["pk"]) for key in spec["Keys"]]},
                )
                for table, spec in params["RequestItems"].items()
            ]
        item = params.get("Key") or params.get("Item") or {}
        context = {"dynamodb:LeadingKeys": [_value(item["pk"])]} if "pk" in item else {}
        return [Request(action, _arn("dynamodb", region, f"table/{params['TableName']}"), context)]

    return requests


def _cluster_arn(name: str, region: str) -> str:
    if name.startswith("arn:"):
        return name
    from moto.sagemaker.models import sagemaker_backends

    cluster = sagemaker_backends[ACCOUNT][region].clusters.get(name)
    if cluster is None:  # the call fails anyway (no such cluster): the ARN's form is what counts
        return _arn("sagemaker", region, f"cluster/{name}")
    return str(cluster.arn)


def _sagemaker(action: str) -> Mapper:
    return lambda params, region: [Request(action, _cluster_arn(params["ClusterName"], region))]


def _target_arn(target: str, region: str) -> str:
    if target.startswith("sagemaker-cluster:"):
        cluster_id = target.removeprefix("sagemaker-cluster:").split("_", 1)[0]
        return _arn("sagemaker", region, f"cluster/{cluster_id}")
    if target.startswith("mi-"):
        return _arn("ssm", region, f"managed-instance/{target}")
    return _arn("ec2", region, f"instance/{target}")


def _instance_tags(target: str, region: str) -> dict[str, Any]:
    from moto.ec2.models import ec2_backends

    tags = ec2_backends[ACCOUNT][region].tags.get(target, {})
    return {f"ssm:resourceTag/{key}": value for key, value in tags.items()}


# What IAM's reference (and so the evaluator) does not know, left out of the evaluation.
NOT_EVALUATED = {
    "ssm:StartSession on a sagemaker-cluster: target": "StartSession's resource types in AWS's reference "
    "are instances, managed instances and documents; the cluster ARN a HyperPod target is authorized "
    "as is not documented (docs/limitations.md): only the document is evaluated",
}


def _start_session(params: dict[str, Any], region: str) -> list[Request]:
    document = Request("ssm:StartSession", _arn("ssm", region, f"document/{params['DocumentName']}"))
    if str(params["Target"]).startswith("sagemaker-cluster:"):
        return [document]  # NOT_EVALUATED
    return [Request("ssm:StartSession", _target_arn(params["Target"], region)), document]


def _own_session(action: str) -> Mapper:
    def requests(params: dict[str, Any], region: str) -> list[Request]:
        context = {"ssm:resourceTag/aws:ssmmessages:session-id": "${aws:userid}"}  # ASSUMED
        return [Request(action, _arn("ssm", region, f"session/{params['SessionId']}"), context)]

    return requests


def _send_command(params: dict[str, Any], region: str) -> list[Request]:
    found = [Request("ssm:SendCommand", _arn("ssm", region, f"document/{params['DocumentName']}"))]
    for target in params.get("InstanceIds", []):
        found.append(Request("ssm:SendCommand", _target_arn(target, region), _instance_tags(target, region)))
    return found


def _request_tags(tags: Any) -> dict[str, Any]:
    pairs = tags.items() if isinstance(tags, dict) else [(t["Key"], t["Value"]) for t in tags or []]
    context: dict[str, Any] = {f"aws:RequestTag/{key}": value for key, value in pairs}
    if context:
        context["aws:TagKeys"] = [key.removeprefix("aws:RequestTag/") for key in context]
    return context


def _ops_item(action: str) -> Mapper:
    def requests(params: dict[str, Any], region: str) -> list[Request]:
        from moto.ssm.models import ssm_backends

        from hyperpod_ha_dev.embedded.opscenter import ops_items

        item = ops_items(ssm_backends[ACCOUNT][region]).get(params["OpsItemId"], {})
        context = {f"aws:ResourceTag/{tag['Key']}": tag["Value"] for tag in item.get("Tags", [])}
        return [Request(action, _arn("ssm", region, f"opsitem/{params['OpsItemId']}"), context)]

    return requests


def _fsx_create(action: str, kind: str) -> Mapper:
    def requests(params: dict[str, Any], region: str) -> list[Request]:
        tags = _request_tags(params.get("Tags"))
        return [
            Request(action, _arn("fsx", region, f"file-system/{params['FileSystemId']}"), tags),
            Request(action, _arn("fsx", region, f"{kind}/{kind}-0123456789abcdef0"), tags),
        ]

    return requests


def _delete_backup(params: dict[str, Any], region: str) -> list[Request]:
    from moto.fsx.models import fsx_backends

    backup = fsx_backends[ACCOUNT][region].backups.get(params["BackupId"])
    tags = {t["Key"]: t["Value"] for t in getattr(backup, "tags", None) or []}
    context = {f"aws:ResourceTag/{key}": value for key, value in tags.items()}
    return [Request("fsx:DeleteBackup", _arn("fsx", region, f"backup/{params['BackupId']}"), context)]


def _secret(action: str) -> Mapper:
    def requests(params: dict[str, Any], region: str) -> list[Request]:
        secret = str(params["SecretId"])
        if not secret.startswith("arn:"):
            from moto.secretsmanager.models import secretsmanager_backends

            found = secretsmanager_backends[ACCOUNT][region].secrets.get(secret)
            secret = (
                str(found.arn) if found is not None else _arn("secretsmanager", region, f"secret:{secret}")
            )
        return [Request(action, secret)]

    return requests


def _anything(action: str) -> Mapper:
    return lambda params, region: [Request(action, "*")]


def _generate_data_key(params: dict[str, Any], region: str) -> list[Request]:
    context = {f"kms:EncryptionContext:{k}": v for k, v in (params.get("EncryptionContext") or {}).items()}
    if context:
        context["kms:EncryptionContextKeys"] = sorted(params["EncryptionContext"])
    return [Request("kms:GenerateDataKey", str(params["KeyId"]), context)]


OPERATIONS: dict[tuple[str, str], Mapper] = {
    **{
        ("dynamodb", op): _dynamodb(f"dynamodb:{op}")
        for op in ("GetItem", "PutItem", "UpdateItem", "DeleteItem", "BatchGetItem")
    },
    ("states", "StartExecution"): lambda p, r: [Request("states:StartExecution", p["stateMachineArn"])],
    ("states", "DescribeExecution"): lambda p, r: [Request("states:DescribeExecution", p["executionArn"])],
    **{
        ("sagemaker", op): _sagemaker(f"sagemaker:{op}")
        for op in (
            "DescribeCluster",
            "ListClusterNodes",
            "DescribeClusterNode",
            "DescribeClusterEvent",
            "BatchRebootClusterNodes",
        )
    },
    ("ssm", "StartSession"): _start_session,
    ("ssm", "TerminateSession"): _own_session("ssm:TerminateSession"),
    ("ssm", "ResumeSession"): _own_session("ssm:ResumeSession"),
    ("ssm", "SendCommand"): _send_command,
    ("ssm", "GetCommandInvocation"): _anything("ssm:GetCommandInvocation"),
    ("ssm", "CancelCommand"): _anything("ssm:CancelCommand"),
    ("ssm", "CreateOpsItem"): lambda p, r: [Request("ssm:CreateOpsItem", "*", _request_tags(p.get("Tags")))],
    ("ssm", "GetOpsItem"): _ops_item("ssm:GetOpsItem"),
    ("ssm", "UpdateOpsItem"): _ops_item("ssm:UpdateOpsItem"),
    ("ssm", "DescribeOpsItems"): _anything("ssm:DescribeOpsItems"),
    ("ssm-incidents", "StartIncident"): lambda p, r: [
        Request("ssm-incidents:StartIncident", p["responsePlanArn"])
    ],
    ("fsx", "CreateBackup"): _fsx_create("fsx:CreateBackup", "backup"),
    ("fsx", "CreateDataRepositoryTask"): _fsx_create("fsx:CreateDataRepositoryTask", "task"),
    ("fsx", "DeleteBackup"): _delete_backup,
    **{
        ("fsx", op): _anything(f"fsx:{op}")
        for op in (
            "DescribeBackups",
            "DescribeFileSystems",
            "DescribeDataRepositoryAssociations",
            "DescribeDataRepositoryTasks",
        )
    },
    ("sns", "Publish"): lambda p, r: [Request("sns:Publish", p["TopicArn"])],
    ("sqs", "SendMessage"): lambda p, r: [
        Request("sqs:SendMessage", _arn("sqs", r, str(p["QueueUrl"]).rstrip("/").rsplit("/", 1)[-1]))
    ],
    ("lambda", "Invoke"): lambda p, r: [
        Request(
            "lambda:InvokeFunction",
            p["FunctionName"]
            if p["FunctionName"].startswith("arn:")
            else _arn("lambda", r, f"function:{p['FunctionName']}"),
        )
    ],
    **{
        ("secretsmanager", op): _secret(f"secretsmanager:{op}")
        for op in (
            "DescribeSecret",
            "GetSecretValue",
            "PutSecretValue",
            "UpdateSecretVersionStage",
            "ListSecretVersionIds",
        )
    },
    ("secretsmanager", "GetRandomPassword"): _anything("secretsmanager:GetRandomPassword"),
    ("kms", "GenerateDataKey"): _generate_data_key,
}


class Unmapped(KeyError):
    """An operation the table does not know: add it (with its resource and context)."""


def requests_for(prefix: str, operation: str, params: dict[str, Any], region: str) -> list[Request]:
    mapper = OPERATIONS.get((prefix, operation))
    if mapper is None:
        raise Unmapped(f"{prefix}:{operation}")
    return mapper(params, region)
