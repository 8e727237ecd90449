"""Links to the AWS console pages a message points people at, in the partition and region of
what they show."""

from __future__ import annotations

import re
from urllib.parse import quote

_ARN = re.compile(r"^arn:(?P<partition>aws[a-z-]*):(?P<service>[a-z0-9-]+):(?P<region>[a-z0-9-]*):")

_CONSOLE_DOMAINS = {
    "aws": "console.aws.amazon.com",
    "aws-cn": "console.amazonaws.cn",
    "aws-us-gov": "console.amazonaws-us-gov.com",
}


def _console(region: str, partition: str) -> str:
    domain = _CONSOLE_DOMAINS.get(partition, _CONSOLE_DOMAINS["aws"])
    return f"https://{region}.{domain}"


def partition_of(arn: str | None) -> str:
    match = _ARN.match(arn or "")
    return match["partition"] if match else "aws"


def execution_console_url(execution_arn: str, region: str) -> str | None:
    """Step Functions console page of one execution; ``None`` when the id is not an execution ARN."""
    match = _ARN.match(execution_arn)
    if match is None or match["service"] != "states" or ":execution:" not in execution_arn:
        return None
    # The execution lives in the region its ARN names, whatever region we run in.
    region = match["region"] or region
    console = _console(region, match["partition"])
    return f"{console}/states/home?region={region}#/v2/executions/details/{execution_arn}"


def ops_item_console_url(ops_item_id: str, region: str, partition: str = "aws") -> str:
    return f"{_console(region, partition)}/systems-manager/opsitems/{ops_item_id}?region={region}"


def incident_console_url(region: str, partition: str = "aws") -> str:
    # Incident Manager's incident list; the record ARN is printed next to the link because
    # the console's deep-link format for one incident is not documented.
    return f"{_console(region, partition)}/systems-manager/incidents/home?region={region}"


def cluster_console_url(cluster: str, region: str, partition: str = "aws") -> str:
    """SageMaker's page of the HyperPod cluster (its nodes, events and status)."""
    return f"{_console(region, partition)}/sagemaker/home?region={region}#/cluster-management/{cluster}"


def alarm_console_url(alarm_name: str, region: str, partition: str = "aws") -> str:
    name = quote(alarm_name, safe="")
    return f"{_console(region, partition)}/cloudwatch/home?region={region}#alarmsV2:alarm/{name}"


def secret_console_url(secret_arn: str, region: str) -> str:
    """Secrets Manager's page of the secret (its versions and rotation), by the name in its ARN."""
    match = _ARN.match(secret_arn)
    partition = match["partition"] if match else "aws"
    # The name without the six characters Secrets Manager appends to the ARN.
    name = re.sub(r"-[A-Za-z0-9]{6}$", "", secret_arn.split(":secret:", 1)[-1])
    return f"{_console(region, partition)}/secretsmanager/secret?name={quote(name, safe='')}&region={region}"
