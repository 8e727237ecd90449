"""The one command a restore runs on a controller (``restore_node.sh``, no parameter), and
what its output says.

The script travels base64-encoded inside the Session document's fixed command, as the probe
and the drill's do; ``make generate`` writes it into template.yaml's ``NodeScripts``. Its output
is read by the kit's parser (``acting.node_commands``).
"""

from __future__ import annotations

from typing import Final

from hyperpod_ha.acting.node_commands import ScriptOutput
from hyperpod_ha.node_scripts import node_command

SCRIPT_NAME: Final = "restore_node.sh"


def restore_command() -> str:
    """No parameter: (re)starts slurmctld on this controller when it is not running or hangs."""
    return node_command(__package__, SCRIPT_NAME, "bash -s")


def restore_result(output: ScriptOutput) -> dict[str, object]:
    """What the restore keeps of the script's output: what it found, whether it started slurmctld
    and whether that answers ping."""
    values = output.values
    return {
        "rc": output.rc,
        "before": values.get("before"),
        "started": values.get("action") == "started",
        "answers_ping": values.get("answers_ping") == "yes",
        "registered_before": values.get("registered_before"),
        "reconfigure_rc": values.get("reconfigure_rc"),
        "output": values.get("output"),
    }
