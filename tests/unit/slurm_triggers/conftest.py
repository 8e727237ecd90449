"""The Slurm triggers' node script, run by real bash as the template's document gives it, with
stand-ins for Slurm's commands: a strigger that keeps its triggers in a file and prints them as
Slurm does, a scontrol that names SlurmUser, a runuser that records whom it ran as."""

from __future__ import annotations

import json
import shlex
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hyperpod_ha.acting.node_commands import ScriptOutput, parse_script_output
from hyperpod_ha.commands import CommandRequest
from hyperpod_ha_dev.simulation.agent import agent_command_line
from hyperpod_ha_dev.simulation.node_paths import moved
from hyperpod_ha_stack.template import load_template, with_fixed_values
from tests.conftest import ROOT

TEMPLATE = load_template(ROOT / "template.yaml")
DOCUMENT = "SlurmTriggersDocument"
TOPIC = "arn:aws:sns:eu-west-1:123456789012:slurm-failover"
PINNED = {"Fn::Sub": "^${SlurmFailoverTopicArn}$"}

# strigger as Slurm prints it (src/strigger/strigger.c): the header, then "%7u %-9s %7s %-35s %6d
# %-8s %-5s %s" per trigger. --set checks the program's path as strigger does (it must exist and
# be a regular file: the text before the first space). STRIGGER_SET_RC makes every --set fail.
FAKE_STRIGGER = r"""
echo "strigger $* as $(id -un) ${RUNUSER_AS:-}" >> "$LOG"
table="$NODE/triggers"
touch "$table"
case "$1" in
  --get)
    if [ -n "${STRIGGER_DOWN:-}" ]; then
      echo "slurm_get_triggers: Unable to contact slurm controller (connect failure)"
      exit 1
    fi
    [ -s "$table" ] || exit 0
    printf 'TRIG_ID RES_TYPE   RES_ID TYPE                                OFFSET USER     FLAGS PROGRAM\n'
    cat "$table"
    ;;
  --set)
    if [ -n "${STRIGGER_SET_RC:-}" ]; then
      echo "slurm_set_trigger: Access/permission denied"
      exit "$STRIGGER_SET_RC"
    fi
    flags="" event="" program=""
    for a in "$@"; do
      case "$a" in
        --flags=PERM) flags=PERM ;;
        --program=*) program=${a#--program=} ;;
        --set) ;;
        --*) event=${a#--} ;;
      esac
    done
    [ -f "${program%% *}" ] || { echo "Invalid --program value, file not found"; exit 1; }
    id=$(( $(wc -l < "$table") + 1 ))
    case "$event" in
      primary_slurmdbd*) type=slurmdbd ;;
      primary_database*) type=database ;;
      *) type=slurmctld ;;
    esac
    printf '%7u %-9s %7s %-35s %6d %-8s %-5s %s\n' "$id" "$type" '*' "$event" 0 "${RUNUSER_AS:-root}" \
      "$flags" "$program" >> "$table"
    ;;
esac
"""

SCRIPTS = {
    "strigger": FAKE_STRIGGER,
    "scontrol": (
        'echo "scontrol $*" >> "$LOG"\n'
        '[ "$1 $2" = "show config" ] && echo "SlurmUser               = ${SLURM_USER:-slurm}(401)"\nexit 0'
    ),
    # Runs the command as whom it is told (recorded): the test runs as one user only.
    "runuser": (
        '[ "$1" = -u ] || exit 2\necho "runuser $2" >> "$LOG"\nuser=$2\nshift 3\nRUNUSER_AS=$user exec "$@"'
    ),
    "hostname": "echo ctl1",
}


class TemplateDocuments:
    """``ssm.get_document`` answered from template.yaml, the stack's topic being :data:`TOPIC`."""

    def get_document(self, Name: str) -> dict[str, Any]:
        content = with_fixed_values(TEMPLATE, TEMPLATE["Resources"][Name]["Properties"]["Content"])
        text = json.dumps(content).replace(json.dumps(PINNED), json.dumps(f"^{TOPIC}$"))
        return {"Content": text}


@dataclass
class Node:
    """A controller's stand-ins (``bin``), its triggers (``triggers``) and the program's directory."""

    root: Path

    @property
    def program_dir(self) -> Path:
        return self.root / "libexec" / "hyperpod-ha"

    @property
    def program(self) -> Path:
        return self.program_dir / "slurm-trigger"

    @property
    def triggers(self) -> Path:
        return self.root / "triggers"

    def calls(self) -> list[str]:
        log = self.root / "calls.log"
        return log.read_text().splitlines() if log.exists() else []

    def run(self, mode: str, topic: str = TOPIC, **env: str) -> ScriptOutput:
        parameters = {"mode": [mode], "topicArn": [topic]}
        line = agent_command_line(CommandRequest("target", DOCUMENT, 60, parameters), TemplateDocuments())
        line = moved(line, "/usr/local/libexec/hyperpod-ha", str(self.program_dir))
        done = subprocess.run(
            shlex.split(line),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env={
                "PATH": f"{self.root / 'bin'}:/usr/bin:/bin",
                "LOG": str(self.root / "calls.log"),
                "NODE": str(self.root),
                **env,
            },
        )
        return parse_script_output(done.stdout)


@pytest.fixture
def node(tmp_path: Path) -> Node:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in SCRIPTS.items():
        path = bin_dir / name
        path.write_text(f"#!/bin/bash\n{body}\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    tmp_path.chmod(0o755)
    return Node(tmp_path)
