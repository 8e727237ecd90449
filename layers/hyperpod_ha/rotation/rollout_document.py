"""The roll-out's SSM documents: the node script they carry and the parameters they admit.

The document carries the script (:mod:`.slurmdbd_credentials`, base64-encoded as the other node
scripts are, so the SSM agent's shell-like splitting has nothing to misread; not compressed, so
that template.yaml holds it as text and CloudFormation encodes it) and takes only non-secret
parameters: the node script fetches AWSCURRENT itself with the node's instance role.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hyperpod_ha.errors import InputRejected

NODE_SCRIPT = Path(__file__).with_name("slurmdbd_credentials.py")
DEFAULT_CONF_PATH = "/opt/slurm/etc/slurmdbd.conf"  # where the HyperPod lifecycle scripts write it
# The lab's controllers keep it where Debian's Slurm does. No other path is admitted: the
# document runs as root, and the node script checks the file name again.
CONF_PATH_PATTERN = r"^(/opt/slurm/etc|/etc/slurm)/slurmdbd\.conf$"
# HyperPod's SlurmUser is "slurm"; the lab's slurmdbd.conf belongs to root.
OWNER_PATTERN = r"^(slurm|root)$"
SECRET_ARN_PATTERN = r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[A-Za-z0-9/_+=.@-]+$"  # noqa: S105 (an ARN pattern)

# The document's parameters. Their values are pasted into a `sh -c "..."` line run as root, so
# each admits only what this project needs (and never quotes, `$`, backticks, backslashes or
# spaces). The service is not a parameter: the node script restarts slurmdbd and nothing else.
# In template.yaml both documents narrow secretId further, to the stack's own secret's ARN.
DOCUMENT_PARAMETERS: dict[str, dict[str, str]] = {
    "secretId": {
        "type": "String",
        "description": "ARN of the database secret; the node reads its AWSCURRENT version itself",
        "allowedPattern": SECRET_ARN_PATTERN,
    },
    "confPath": {
        "type": "String",
        "description": "The controller's local slurmdbd.conf",
        "default": DEFAULT_CONF_PATH,
        "allowedPattern": CONF_PATH_PATTERN,
    },
    "owner": {
        "type": "String",
        "description": "SlurmUser, who owns slurmdbd.conf (mode 600)",
        "default": "slurm",
        "allowedPattern": OWNER_PATTERN,
    },
    "verifySeconds": {
        "type": "String",
        "description": "How long to wait for slurmdbd to answer after the restart",
        "default": "45",
        "allowedPattern": r"^[0-9]{1,3}$",
    },
}


def secret_arn_pattern(secret_arn: str) -> str:
    """The ``allowedPattern`` admitting exactly ``secret_arn`` (template.yaml builds the same
    with Fn::Split/Fn::Join: of an ARN's characters only ``.`` and ``+`` mean something)."""
    return "^" + secret_arn.replace(".", "\\.").replace("+", "\\+") + "$"


def _encoded_script() -> str:
    return base64.b64encode(NODE_SCRIPT.read_bytes()).decode("ascii")


def node_command() -> str:
    """The one command line both documents run (``{{ name }}`` is SSM's parameter syntax)."""
    arguments = " ".join(f"{{{{ {name} }}}}" for name in DOCUMENT_PARAMETERS)
    return f'/bin/sh -c "echo {_encoded_script()} | base64 -d | python3 - {arguments}"'


class DocumentParametersInvalid(InputRejected):
    """A parameter value the document's ``allowedPattern`` refuses (SSM would refuse it too)."""


def render_node_command(parameters: Mapping[str, list[str]]) -> str:
    """The command line SSM would run: defaults filled in, every value checked against its
    ``allowedPattern`` first (as SSM does; the values end up inside ``sh -c "..."``)."""
    rendered = node_command()
    for name, spec in DOCUMENT_PARAMETERS.items():
        values = parameters.get(name) or ([spec["default"]] if "default" in spec else [])
        if len(values) != 1:
            raise DocumentParametersInvalid(f"parameter {name!r} needs exactly one value")
        if not re.fullmatch(spec["allowedPattern"], values[0]):
            raise DocumentParametersInvalid(f"parameter {name!r} does not match its allowedPattern")
        rendered = rendered.replace(f"{{{{ {name} }}}}", values[0])
    unknown = set(parameters) - set(DOCUMENT_PARAMETERS)
    if unknown:
        raise DocumentParametersInvalid(f"unknown parameters {sorted(unknown)}")
    return rendered


def command_document() -> dict[str, Any]:
    """Content of the Command document (SendCommand: EC2 and hybrid managed instances)."""
    return {
        "schemaVersion": "2.2",
        "description": "hyperpod-ha: point slurmdbd at the database secret's AWSCURRENT credentials",
        "parameters": DOCUMENT_PARAMETERS,
        "mainSteps": [
            {
                "action": "aws:runShellScript",
                "name": "slurmdbdCredentials",
                "inputs": {"runCommand": [node_command()], "timeoutSeconds": "300"},
            }
        ],
    }


# The generic AWS document takes the whole command line as its parameter. Only the lab's
# transport (and tests) use it: in an account, IAM allows this function's own document only.
GENERIC_DOCUMENT = "AWS-StartNonInteractiveCommand"
