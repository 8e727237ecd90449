"""The one command a restore runs on a controller (``restore_node.sh``, no parameter), and
what its output says.

The script travels base64-encoded inside the Session document's fixed command, as the probe
and the drill's do; ``make generate`` writes it into template.yaml's ``NodeScripts``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from hyperpod_ha.node_scripts import node_command
from hyperpod_ha.restore.errors import RestoreCommandFailed

SCRIPT_NAME: Final = "restore_node.sh"
RESULT_MARK: Final = "HYPERPOD_HA_RESTORE_RESULT"
_VALUE_LIMIT: Final = 400


def restore_command() -> str:
    """No parameter: (re)starts slurmctld on this controller when it is not running or hangs."""
    return node_command(__package__, SCRIPT_NAME, "bash -s")


@dataclass(frozen=True)
class RestoreOutput:
    rc: int
    values: dict[str, str] = field(default_factory=dict)

    @property
    def started(self) -> bool:
        return self.values.get("action") == "started"

    @property
    def answers_ping(self) -> bool:
        return self.values.get("answers_ping") == "yes"

    def to_json(self) -> dict[str, object]:
        return {
            "rc": self.rc,
            "before": self.values.get("before"),
            "started": self.started,
            "answers_ping": self.answers_ping,
            "registered_before": self.values.get("registered_before"),
            "reconfigure_rc": self.values.get("reconfigure_rc"),
            "output": self.values.get("output"),
        }


def parse_restore_output(text: str) -> RestoreOutput:
    values: dict[str, str] = {}
    rc: int | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith(RESULT_MARK):
            found = re.search(r"rc=(\d{1,10})", line)  # bounded: int() refuses 4300 digits
            rc = int(found.group(1)) if found else None
            continue
        if "=" in line and " " not in line.split("=", 1)[0]:
            name, value = line.split("=", 1)
            values.setdefault(name, value[:_VALUE_LIMIT])
    if rc is None:
        raise RestoreCommandFailed("the restore script did not finish (no result line)")
    return RestoreOutput(rc, values)
