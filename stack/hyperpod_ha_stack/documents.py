"""The scripts the stack's SSM documents run on a node, as template.yaml's ``NodeScripts``, and
each document's command.

A node script's source is its file in the runtime package (``probe/controller_probe.sh``, ...),
which ships in the layer too. CloudFormation cannot read a file, so the generated ``Mappings`` at
the end of template.yaml hold each script as text; a document's command is the line the runtime
package builds (``hyperpod_ha.node_scripts``: the script base64-encoded, decoded on the node), with
the encoding left to CloudFormation: ``!Sub [<the line>, {Script: Fn::Base64: !FindInMap
[NodeScripts, <Key>, Script]}]``. ``make generate`` writes the scripts
(``hyperpod_ha_stack.template_tail``); a test fails when they, or a document's command, differ.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hyperpod_ha.drill.node import accounting_command, jobs_command, takeover_command
from hyperpod_ha.node_scripts import node_script
from hyperpod_ha.probe import probe_command
from hyperpod_ha.restore.node import restore_command
from hyperpod_ha.slurm_triggers.node import triggers_command

MAPPING = "NodeScripts"
# What a command names its script by in its Fn::Sub.
VARIABLE = "Script"


@dataclass(frozen=True)
class NodeScript:
    """A script run on a node: the package it sits in, and its file name there."""

    package: str
    name: str

    def text(self) -> str:
        return node_script(self.package, self.name)

    @property
    def path(self) -> str:
        """Where it is in the repository."""
        return "layers/" + self.package.replace(".", "/") + "/" + self.name


# NodeScripts key -> the script.
NODE_SCRIPTS: dict[str, NodeScript] = {
    "ControllerProbe": NodeScript("hyperpod_ha.probe", "controller_probe.sh"),
    "SlurmdbdRollout": NodeScript("hyperpod_ha.rotation", "slurmdbd_credentials.py"),
    "FailoverDrill": NodeScript("hyperpod_ha.drill", "drill_node.sh"),
    "RestoreSlurmctld": NodeScript("hyperpod_ha.restore", "restore_node.sh"),
    "SlurmTriggers": NodeScript("hyperpod_ha.slurm_triggers", "slurm_triggers_node.sh"),
}


def _rollout_command() -> str:
    from hyperpod_ha.rotation.rollout_document import node_command

    return node_command()


# Session document "<key>Document" -> the command the runtime package builds, and its script.
NODE_COMMANDS: dict[str, tuple[Callable[[], str], str]] = {
    "ControllerProbe": (probe_command, "ControllerProbe"),
    "SlurmdbdRollout": (_rollout_command, "SlurmdbdRollout"),
    "FailoverDrillTakeover": (takeover_command, "FailoverDrill"),
    "FailoverDrillJobs": (jobs_command, "FailoverDrill"),
    "FailoverDrillAccounting": (accounting_command, "FailoverDrill"),
    "RestoreSlurmctld": (restore_command, "RestoreSlurmctld"),
    "SlurmTriggers": (triggers_command, "SlurmTriggers"),
}


def command_of(key: str) -> dict[str, Any]:
    """The template's form of the command of ``key``: the runtime's command line with its
    script's base64 left to CloudFormation's ``Fn::Base64`` of the script's text."""
    build, script = NODE_COMMANDS[key]
    command = build()
    encoded = base64.b64encode(NODE_SCRIPTS[script].text().encode("utf-8")).decode("ascii")
    if command.count(encoded) != 1 or "${" in command:
        raise ValueError(f"the command of {key} does not carry {script} once, base64-encoded")
    line = command.replace(encoded, "${" + VARIABLE + "}")
    return {"Fn::Sub": [line, {VARIABLE: {"Fn::Base64": {"Fn::FindInMap": [MAPPING, script, VARIABLE]}}}]}


def node_scripts() -> dict[str, dict[str, str]]:
    """The ``NodeScripts`` mapping: one ``Script`` (its text) per key."""
    return {key: {VARIABLE: script.text()} for key, script in NODE_SCRIPTS.items()}
