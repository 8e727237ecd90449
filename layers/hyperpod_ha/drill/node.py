"""The commands a drill runs on controllers: one bash script, three Session documents.

The script (``drill_node.sh``) travels base64-encoded inside each document's fixed command,
as the probe does. ``FailoverDrillTakeoverDocument`` takes only the controller index;
``FailoverDrillJobsDocument`` only ``list``/``submit`` and job ids, each matched by a narrow
``allowedPattern``; ``FailoverDrillAccountingDocument`` takes nothing (it registers the active
controller with slurmdbd again when none is). ``make generate`` writes them into
template.yaml.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from hyperpod_ha.acting.node_commands import ScriptOutput, parse_script_output
from hyperpod_ha.drill.models import InvalidDrillRequest
from hyperpod_ha.node_scripts import node_command

SCRIPT_NAME: Final = "drill_node.sh"
INDEX_PATTERN: Final = "^[0-9]$"
JOBS_ACTION_PATTERN: Final = "^(list|submit)$"
# Up to 100 numeric job ids, or "none".
JOB_IDS_PATTERN: Final = "^(none|[0-9]{1,10}(,[0-9]{1,10}){0,99})$"
MAX_JOB_IDS: Final = 100


def _command(arguments: str) -> str:
    return node_command(__package__, SCRIPT_NAME, f"bash -s -- {arguments}")


def takeover_command() -> str:
    """``controllerIndex`` 1-9: that backup takes over; 0: hand back to the primary."""
    return _command("takeover {{ controllerIndex }}")


def jobs_command() -> str:
    """``action`` list (with ``jobIds``) or submit."""
    return _command("{{ action }} {{ jobIds }}")


def accounting_command() -> str:
    """No parameter: registers the active controller with slurmdbd when none is registered."""
    return _command("register")


def takeover_parameters(index: int) -> dict[str, list[str]]:
    value = str(index)
    if not re.fullmatch(INDEX_PATTERN, value):
        raise InvalidDrillRequest(f"controller index {index} is not 0-9")
    return {"controllerIndex": [value]}


def jobs_parameters(action: str, job_ids: list[str] | None = None) -> dict[str, list[str]]:
    ids = ",".join(job_ids or []) or "none"
    if not re.fullmatch(JOBS_ACTION_PATTERN, action) or not re.fullmatch(JOB_IDS_PATTERN, ids):
        raise InvalidDrillRequest("jobs action must be list or submit, job ids numeric (at most 100)")
    return {"action": ["list" if action == "list" else "submit"], "jobIds": [ids]}


@dataclass(frozen=True)
class NodeOutput:
    """The drill script's output: its exit code and ``key=value`` lines, and its rows as Slurm's
    jobs (``job <id> <state>``: squeue) and how the jobs squeue no longer lists ended (``acct <id>
    <state> <exit>``: sacct)."""

    rc: int
    values: dict[str, str] = field(default_factory=dict)
    jobs: dict[str, str] = field(default_factory=dict)  # squeue: id -> state
    accounted: dict[str, tuple[str, str]] = field(default_factory=dict)  # sacct: id -> (state, exit)

    @classmethod
    def of(cls, output: ScriptOutput) -> NodeOutput:
        jobs: dict[str, str] = {}
        accounted: dict[str, tuple[str, str]] = {}
        for words in output.rows:
            if len(words) == 3 and words[0] == "job" and words[1].replace("_", "").isdigit():
                jobs[words[1]] = words[2]
            elif len(words) == 4 and words[0] == "acct" and words[1].isdigit():
                accounted[words[1]] = (words[2], words[3])
        return cls(output.rc, output.values, jobs, accounted)


def parse_node_output(text: str) -> NodeOutput:
    return NodeOutput.of(parse_script_output(text))
