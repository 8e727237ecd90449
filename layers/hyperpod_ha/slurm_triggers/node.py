"""The Slurm triggers' one command on a controller (``slurm_triggers_node.sh``), its parameters
and what its output says.

The script travels base64-encoded inside the Session document's fixed command, as the probe's
and the restore's do; ``make generate`` writes it into template.yaml's ``NodeScripts``. Its two
parameters reach a ``bash -s -- <mode> <topic>`` line, so each admits only what it must: the mode
``install`` or ``list``, and the topic ARN, which template.yaml pins to the stack's own
``SlurmFailoverTopicArn`` (:func:`topic_arn_pattern`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from hyperpod_ha.acting.node_commands import ScriptOutput
from hyperpod_ha.errors import InputRejected
from hyperpod_ha.node_scripts import node_command
from hyperpod_ha.slurm.triggers import EVENTS

SCRIPT_NAME: Final = "slurm_triggers_node.sh"
MODE_PATTERN: Final = "^(install|list)$"
# The template's SlurmFailoverTopicArn admits no other ARN: no character of it means anything to
# a regular expression, so the ARN itself between ^ and $ admits exactly it.
TOPIC_ARN_PATTERN: Final = r"^arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]+$"

Mode = Literal["install", "list"]


class TriggersRequestRejected(InputRejected):
    """A mode or topic the document's ``allowedPattern`` refuses (SSM would refuse it too)."""


def triggers_command() -> str:
    """``mode`` install or list, ``topicArn`` the cluster's failover topic."""
    return node_command(__package__, SCRIPT_NAME, "bash -s -- {{ mode }} {{ topicArn }}")


def topic_arn_pattern(topic_arn: str) -> str:
    """The ``allowedPattern`` admitting exactly ``topic_arn`` (template.yaml builds the same)."""
    if not re.fullmatch(TOPIC_ARN_PATTERN, topic_arn):
        raise TriggersRequestRejected("the topic is not an SNS topic ARN")
    return f"^{topic_arn}$"


def triggers_parameters(mode: Mode, topic_arn: str) -> dict[str, list[str]]:
    if not re.fullmatch(MODE_PATTERN, mode):
        raise TriggersRequestRejected("mode must be install or list")
    topic_arn_pattern(topic_arn)
    return {"mode": [mode], "topicArn": [topic_arn]}


def _events(value: str | None) -> tuple[str, ...]:
    """A comma-separated list of the script's, our events only, in their order."""
    named = set((value or "").split(","))
    return tuple(name for name in EVENTS if name in named)


@dataclass(frozen=True)
class TriggersResult:
    """What the script said: its exit code, the program's path and what became of it, and the
    events installed now, already there, failed (install) or missing (list)."""

    rc: int
    program: str | None
    program_action: str | None  # written, unchanged (install)
    program_state: str | None  # executable, not_executable, missing (list)
    installed: tuple[str, ...]
    already: tuple[str, ...]
    failed: tuple[str, ...]
    missing: tuple[str, ...]
    error: str | None

    @property
    def complete(self) -> bool:
        """Every event has a trigger of ours now, and the program is in place."""
        return self.rc == 0 and not self.failed and set(self.installed + self.already) == set(EVENTS)

    def to_json(self) -> dict[str, object]:
        return {
            "rc": self.rc,
            "program_action": self.program_action,
            "installed": list(self.installed),
            "already": len(self.already),
            "failed": list(self.failed),
            "error": self.error,
        }


def triggers_result(output: ScriptOutput) -> TriggersResult:
    values = output.values
    error = values.get("error") or values.get("program_error") or values.get("get_error")
    return TriggersResult(
        rc=output.rc,
        program=values.get("program"),
        program_action=values.get("program_action"),
        program_state=values.get("program_state"),
        installed=_events(values.get("installed")),
        already=_events(values.get("already")),
        failed=_events(values.get("failed")),
        missing=_events(values.get("missing")),
        error=error,
    )
