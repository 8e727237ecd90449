"""The stack's Command documents (Run Command transport), kept in ``template.yaml`` by this module.

``SendCommand`` runs Command documents only, so with ``CommandTransport=run-command`` the probe
and the slurmdbd roll-out travel in Command documents of this stack rather than in
``AWS-RunShellScript`` (which would let the functions run anything as root). Each document's
whole ``Content`` is generated here and written as one JSON line (JSON is YAML);
``python -m hyperpod_ha_dev.command_documents --write template.yaml`` (``make probe-document``)
writes them and a test fails when they differ.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from hyperpod_ha.probe import probe_command
from hyperpod_ha_dev.documents import replace_resource_lines, resource_line, rewrite_template

# The probe's own deadline is 90 s; the agent stops the script after this, whatever happens.
PROBE_TIMEOUT_SECONDS = "120"


def probe_command_document() -> dict[str, Any]:
    """The probe as a Command document: no parameters, so nothing but the fixed probe runs."""
    return {
        "schemaVersion": "2.2",
        "description": "hyperpod-ha controller probe (read-only)",
        "mainSteps": [
            {
                "action": "aws:runShellScript",
                "name": "probe",
                "inputs": {"runCommand": [probe_command()], "timeoutSeconds": PROBE_TIMEOUT_SECONDS},
            }
        ],
    }


# The stack's own secret and no other, as the Session document pins it: DbSecretArn with "."
# and "+" escaped (rollout_document.secret_arn_pattern), built at deploy time.
PINNED_SECRET_PATTERN: dict[str, Any] = {
    "Fn::Join": [
        "",
        [
            "^",
            {
                "Fn::Join": [
                    "\\+",
                    {"Fn::Split": ["+", {"Fn::Join": ["\\.", {"Fn::Split": [".", {"Ref": "DbSecretArn"}]}]}]},
                ]
            },
            "$",
        ],
    ]
}


def _rollout_command_document() -> dict[str, Any]:
    from hyperpod_ha.rotation.rollout_document import command_document

    document = command_document()
    secret = {**document["parameters"]["secretId"], "allowedPattern": PINNED_SECRET_PATTERN}
    return {**document, "parameters": {**document["parameters"], "secretId": secret}}


# Command document logical id -> its Content.
COMMAND_DOCUMENTS: dict[str, Callable[[], dict[str, Any]]] = {
    "ControllerProbeCommandDocument": probe_command_document,
    "SlurmdbdRolloutCommandDocument": _rollout_command_document,
}

_CONTENT_LINE = re.compile(r"^(?P<indent>\s+)Content: (?P<value>.*)$", re.MULTILINE)


def _content_line(template: str, logical_id: str) -> re.Match[str]:
    return resource_line(template, logical_id, _CONTENT_LINE)


def command_documents_in_sync(template: str) -> dict[str, bool]:
    return {
        name: json.loads(_content_line(template, name)["value"]) == build()
        for name, build in COMMAND_DOCUMENTS.items()
    }


def write_command_documents(template: str) -> str:
    values = {name: json.dumps(build()) for name, build in COMMAND_DOCUMENTS.items()}
    return replace_resource_lines(template, values, _CONTENT_LINE)


def main() -> None:
    rewrite_template(write_command_documents, __doc__)


if __name__ == "__main__":
    main()
