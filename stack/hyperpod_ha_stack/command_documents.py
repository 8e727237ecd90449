"""The stack's Command documents (Run Command transport), generated into template.yaml.

``SendCommand`` runs Command documents only, so with ``CommandTransport=run-command`` the probe
and the slurmdbd roll-out travel in Command documents of this stack rather than in
``AWS-RunShellScript`` (which would let the functions run anything as root). Each document is
generated whole here, its command written as the Session document's, its script read from
``NodeScripts`` (``hyperpod_ha_stack.documents``); ``make generate`` writes them into the
generated end of template.yaml and a test fails when they differ.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hyperpod_ha.probe import probe_command
from hyperpod_ha_stack.documents import NODE_COMMANDS, command_of

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


def rollout_command_document() -> dict[str, Any]:
    from hyperpod_ha.rotation.rollout_document import command_document

    document = command_document()
    secret = {**document["parameters"]["secretId"], "allowedPattern": PINNED_SECRET_PATTERN}
    return {**document, "parameters": {**document["parameters"], "secretId": secret}}


def _topic_parameter(description: str) -> dict[str, Any]:
    """The stack's failover topic and no other: SlurmFailoverTopicArn between ^ and $ (its
    allowed characters mean nothing to a regular expression: slurm_triggers.node)."""
    return {
        "type": "String",
        "description": description,
        "allowedPattern": {"Fn::Sub": "^${SlurmFailoverTopicArn}$"},
    }


# The trigger script bounds its own calls (about 30 s at worst).
TRIGGERS_TIMEOUT_SECONDS = "60"


def triggers_command_document() -> dict[str, Any]:
    """The Slurm triggers' install or list as a Command document: only the mode and this stack's
    topic are parameters."""
    from hyperpod_ha.slurm_triggers.node import MODE_PATTERN, triggers_command

    return {
        "schemaVersion": "2.2",
        "description": "hyperpod-ha Slurm triggers (install: the program and the missing triggers; list)",
        "parameters": {
            "mode": {
                "type": "String",
                "description": "install (the program, then each missing trigger) or list (read-only)",
                "allowedPattern": MODE_PATTERN,
            },
            "topicArn": _topic_parameter("The cluster's failover topic the trigger program publishes to"),
        },
        "mainSteps": [
            {
                "action": "aws:runShellScript",
                "name": "slurmTriggers",
                "inputs": {"runCommand": [triggers_command()], "timeoutSeconds": TRIGGERS_TIMEOUT_SECONDS},
            }
        ],
    }


# Command document logical id -> (its Content as the node receives it, the key of its command,
# the same as its Session document's: hyperpod_ha_stack.documents.NODE_COMMANDS).
COMMAND_DOCUMENTS: dict[str, tuple[Callable[[], dict[str, Any]], str]] = {
    "ControllerProbeCommandDocument": (probe_command_document, "ControllerProbe"),
    "SlurmdbdRolloutCommandDocument": (rollout_command_document, "SlurmdbdRollout"),
    "SlurmTriggersCommandDocument": (triggers_command_document, "SlurmTriggers"),
}


def command_document_resource(logical_id: str) -> dict[str, Any]:
    """The resource, its one command written as the Session document's (its script read from
    ``NodeScripts``, kept once in the template)."""
    build, key = COMMAND_DOCUMENTS[logical_id]
    content = build()
    command, _ = NODE_COMMANDS[key]
    for step in content["mainSteps"]:
        if step["inputs"]["runCommand"] != [command()]:
            raise ValueError(f"{logical_id} runs something other than the command of {key}")
        step["inputs"]["runCommand"] = [command_of(key)]
    return {
        "Type": "AWS::SSM::Document",
        "Condition": "UsesRunCommand",
        "Properties": {"DocumentType": "Command", "DocumentFormat": "JSON", "Content": content},
    }
