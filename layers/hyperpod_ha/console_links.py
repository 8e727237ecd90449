"""Links to the AWS console pages a message points people at, in the partition and region of
what they show."""

from __future__ import annotations

import re

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
