"""The commands the stack's SSM documents run on a node, as template.yaml's ``NodeCommands``.

CloudFormation cannot read a file, so each node script travels in the template as one command
line (the script compressed and base64-encoded). They sit in the generated ``Mappings`` at the
end of template.yaml; each document reads its own with ``!FindInMap [NodeCommands, <Name>,
Command]``. ``make generate`` writes them (``hyperpod_ha_stack.template_tail``); a test fails
when they differ.
"""

from __future__ import annotations

from collections.abc import Callable

from hyperpod_ha.drill.node import accounting_command, jobs_command, takeover_command
from hyperpod_ha.probe import probe_command
from hyperpod_ha.restore.node import restore_command

MAPPING = "NodeCommands"


def _rollout_command() -> str:
    from hyperpod_ha.rotation.rollout_document import node_command

    return node_command()


# NodeCommands key -> the command. The Session document of a key is "<key>Document".
NODE_COMMANDS: dict[str, Callable[[], str]] = {
    "ControllerProbe": probe_command,
    "SlurmdbdRollout": _rollout_command,
    "FailoverDrillTakeover": takeover_command,
    "FailoverDrillJobs": jobs_command,
    "FailoverDrillAccounting": accounting_command,
    "RestoreSlurmctld": restore_command,
}


def command_of(key: str) -> dict[str, list[str]]:
    """The template's reference to the command of ``key``."""
    return {"Fn::FindInMap": [MAPPING, key, "Command"]}


def node_commands() -> dict[str, dict[str, str]]:
    """The ``NodeCommands`` mapping: one ``Command`` per key."""
    return {key: {"Command": build()} for key, build in NODE_COMMANDS.items()}
