"""``template.yaml`` as SAM translates it: the CloudFormation that would really be deployed.

The embedded stack creates this, and checkov and the IAM tests read it, not the SAM source, so
the roles, policies, permissions and rules SAM generates (dead-letter queue grants,
LambdaInvokePolicy, event rules) are created and checked too. Uses SAM's own translator and its
YAML reader (samtranslator's public API, installed with the SAM CLI).
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import logging
import os
from pathlib import Path
from typing import Any

# The translator warns, when collected, that its metrics were never published: nothing here would.
logging.getLogger("samtranslator.metrics.metrics").setLevel(logging.ERROR)

# Parameters without a default, and values a deployment would give them; with the rotation's
# database and network (required with RotationDays), so the function is checked in its VPC.
SAMPLE_PARAMETERS: dict[str, Any] = {
    "ClusterName": "ml-cluster",
    "SlurmFailoverTopicArn": "arn:aws:sns:us-east-1:123456789012:slurm-failover",
    "DbSecretArn": "arn:aws:secretsmanager:us-east-1:123456789012:secret:slurmdbd-AbCdEf",
    "DbHost": "db.example.internal",
    "FileSystemId": "fs-0123456789abcdef0",
    "SubnetIds": ["subnet-0123456789abcdef0"],
    "SecurityGroupIds": ["sg-0123456789abcdef0"],
}


class _NoManagedPolicies:
    """SAM asks IAM for managed policy ARNs by name; this template names none, by ARN or name."""

    def load(self) -> dict[str, str]:
        return {}


# Where ``sam package`` would have put the code: one bucket, a key per local directory.
PACKAGED_BUCKET = "packaged"


def _as_packaged(template: dict[str, Any], root: Path) -> None:
    """Local code paths as ``sam package`` would leave them: S3 URIs (as ``sam validate`` does),
    and the state machine's definition inlined so its substitutions are checked too."""
    for resource in template["Resources"].values():
        properties = resource.get("Properties", {})
        for key in ("CodeUri", "ContentUri"):
            if isinstance(properties.get(key), str):
                properties[key] = f"s3://{PACKAGED_BUCKET}/{properties[key].strip('/')}.zip"
        if isinstance(properties.get("DefinitionUri"), str):
            properties["Definition"] = json.loads((root / properties.pop("DefinitionUri")).read_text())


def local_code(root: Path, code: dict[str, Any]) -> Path:
    """The directory a translated function's ``Code`` (or a layer's ``Content``) was packaged from."""
    return root / str(code["S3Key"]).removesuffix(".zip")


@functools.lru_cache(maxsize=2)
def _parsed(text: str) -> dict[str, Any]:
    """The template read once per text: SAM's YAML reader takes about two seconds on it, and the
    tests translate it with many parameter sets."""
    from samtranslator.yaml_helper import yaml_parse

    parsed: dict[str, Any] = yaml_parse(text)
    return parsed


def translate(template_path: Path, parameters: dict[str, Any] | None = None) -> dict[str, Any]:
    from samtranslator.translator.transform import transform

    # The translator asks boto3 for the region (pseudo parameters); any region will do.
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    # A copy: the translation changes what it is given.
    source = copy.deepcopy(_parsed(template_path.read_text()))
    _as_packaged(source, template_path.parent)
    values = {**SAMPLE_PARAMETERS, **(parameters or {})}
    translated: dict[str, Any] = transform(source, values, _NoManagedPolicies())
    return translated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("template", type=Path)
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument(
        "--parameter", action="append", default=[], metavar="KEY=VALUE", help="a parameter value"
    )
    arguments = parser.parse_args()
    parameters = dict(item.split("=", 1) for item in arguments.parameter)
    translated = translate(arguments.template, parameters)
    arguments.output.write_text(json.dumps(translated, indent=1, default=str))


if __name__ == "__main__":
    main()
