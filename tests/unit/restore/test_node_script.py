"""The restore's node script, run by real bash exactly as the template's document gives it,
with small Slurm stand-ins on PATH that record what they were asked."""

from __future__ import annotations

import json
import shlex
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hyperpod_ha.acting.node_commands import ScriptOutputRejected, parse_script_output
from hyperpod_ha.commands import CommandRequest
from hyperpod_ha.restore.node import restore_result
from hyperpod_ha_dev.simulation.agent import DocumentParametersRejected, agent_command_line
from hyperpod_ha_stack.template import load_template, with_fixed_values
from tests.conftest import ROOT
from tests.fakes.slurmctld_processes import AS_ROOT, OTHER_USER, SlurmctldProcesses

TEMPLATE = load_template(ROOT / "template.yaml")
DOCUMENT = "RestoreSlurmctldDocument"


class TemplateDocuments:
    """``ssm.get_document`` answered from template.yaml."""

    def get_document(self, Name: str) -> dict[str, Any]:
        content = TEMPLATE["Resources"][Name]["Properties"]["Content"]
        return {"Content": json.dumps(with_fixed_values(TEMPLATE, content))}


@pytest.fixture
def node(tmp_path: Path) -> Path:
    """Stand-ins: pgrep gives $PID (none when empty), scontrol ping says $PING for this host
    (ctl2), sacctmgr gives $REGISTERED; each appends its arguments to calls.log."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    scripts = {
        "hostname": "echo ctl2",
        "pgrep": '[ -n "${PID:-}" ] && echo "$PID" || exit 1',
        # A (re)started slurmctld answers ping from then on. `systemctl show`: no unit says
        # which slurmctld the node runs (its PATH's does).
        "systemctl": '[ "$1" = show ] && exit 0; echo "systemctl $*" >> "$LOG"; touch "$LOG.started"',
        "scontrol": (
            'echo "scontrol $*" >> "$LOG"\n'
            'own=${PING:-UP}; [ -e "$LOG.started" ] && own=UP\n'
            'case "$1" in\n'
            '  ping) echo "Slurmctld(primary) at ${PRIMARY:-ctl1} is UP"\n'
            '        echo "Slurmctld(backup) at ctl2 is $own" ;;\n'
            '  show) echo "ClusterName = lab" ;;\n'
            "esac"
        ),
        "sacctmgr": 'echo "sacctmgr $*" >> "$LOG"; echo "${REGISTERED:-}"',
        "sleep": "exit 0",
    }
    for name, body in scripts.items():
        path = bin_dir / name
        path.write_text(f"#!/bin/bash\n{body}\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return tmp_path


@pytest.fixture
def processes() -> Iterator[SlurmctldProcesses]:
    """Processes named slurmctld; the node's Slurm binary is on the script's PATH (``run``)."""
    with SlurmctldProcesses.made() as made:
        yield made


def run(node: Path, parameters: dict[str, list[str]] | None = None, **env: str) -> tuple[str, list[str]]:
    line = agent_command_line(CommandRequest("target", DOCUMENT, 30, parameters or {}), TemplateDocuments())
    slurm = env.pop("SLURM_SBIN", "/nonexistent")
    done = subprocess.run(
        shlex.split(line),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"PATH": f"{node / 'bin'}:{slurm}:/usr/bin:/bin", "LOG": str(node / "calls.log"), **env},
    )
    log = node / "calls.log"
    return done.stdout, log.read_text().splitlines() if log.exists() else []


def slurmctld(processes: SlurmctldProcesses, *, stopped: bool = False) -> dict[str, str]:
    """The environment of a node whose own slurmctld runs (stopped: in state T, SIGSTOP)."""
    pid = processes.start(stopped=stopped)
    return {"PID": str(pid), "SLURM_SBIN": str(processes.node_binary.parent)}


def test_a_slurmctld_not_running_is_started(node: Path) -> None:
    out, calls = run(node)
    output = parse_script_output(out)
    assert (output.rc, output.values["before"], output.values["action"], output.values["answers_ping"]) == (
        0,
        "not-running",
        "started",
        "yes",
    )
    assert "systemctl start slurmctld" in calls


def test_a_stopped_slurmctld_is_restarted(node: Path, processes: SlurmctldProcesses) -> None:
    out, calls = run(node, **slurmctld(processes, stopped=True))
    assert parse_script_output(out).values["before"] == "stopped"
    assert "systemctl restart slurmctld" in calls


def test_a_slurmctld_that_does_not_answer_ping_is_restarted(
    node: Path, processes: SlurmctldProcesses
) -> None:
    out, calls = run(node, PING="DOWN", **slurmctld(processes))
    output = parse_script_output(out)
    assert output.values["before"] == "not-answering"
    assert "systemctl restart slurmctld" in calls
    assert output.values["answers_ping"] == "yes"


def test_a_running_answering_slurmctld_is_left_alone(node: Path, processes: SlurmctldProcesses) -> None:
    out, calls = run(node, **slurmctld(processes))
    output = parse_script_output(out)
    assert (output.values["before"], output.values["action"]) == ("running", "none")
    assert not [call for call in calls if call.startswith("systemctl")]


def test_the_primary_taking_control_back_is_registered_with_slurmdbd_when_none_is(
    node: Path, processes: SlurmctldProcesses
) -> None:
    # Run on the configured primary (this host is ctl2 here, named as the primary by ping).
    out, calls = run(node, PRIMARY="ctl2", PING="UP")
    output = parse_script_output(out)
    assert output.values["registered_before"] == "none"
    assert "scontrol reconfigure" in calls
    again, calls = run(node, PRIMARY="ctl2", REGISTERED="10.1.0.2", **slurmctld(processes))
    assert parse_script_output(again).values["registered_before"] == "10.1.0.2"
    assert calls.count("scontrol reconfigure") == 1  # only the first run reconfigured


@pytest.mark.parametrize("impostor", ["another binary", "a script", "another user"])
def test_a_process_only_named_slurmctld_is_not_the_nodes_slurmctld(
    node: Path, processes: SlurmctldProcesses, impostor: str
) -> None:
    # Issue 35, finding 5: the restore saw before=running and started nothing.
    if impostor == "another user" and not AS_ROOT:
        pytest.skip("starting a process as another user needs root")
    binary = {"another binary": processes.binary("elsewhere"), "a script": processes.script("bin")}.get(
        impostor
    )
    pid = processes.start(binary, user=OTHER_USER if impostor == "another user" else None)
    out, calls = run(node, PID=str(pid), SLURM_SBIN=str(processes.node_binary.parent))
    assert parse_script_output(out).values["before"] == "not-running"
    assert "systemctl start slurmctld" in calls


def test_a_failed_start_reports_its_exit_code(node: Path) -> None:
    (node / "bin" / "systemctl").write_text("#!/bin/bash\necho 'Job for slurmctld.service failed'; exit 1\n")
    output = parse_script_output(run(node)[0])
    assert output.rc == 1
    assert "failed" in output.values["output"]


def test_the_document_takes_no_parameter() -> None:
    for parameters in ({"command": ["id"]}, {"controllerIndex": ["0"]}):
        with pytest.raises(DocumentParametersRejected):
            agent_command_line(CommandRequest("target", DOCUMENT, 30, parameters), TemplateDocuments())
    assert "parameters" not in TEMPLATE["Resources"][DOCUMENT]["Properties"]["Content"]


def test_a_slurmctld_that_did_not_answer_within_the_wait_is_told() -> None:
    # (the script's own 20 s wait is not run here: a test does not wait)
    output = restore_result(
        parse_script_output("before=not-running\naction=started\nanswers_ping=no\nHYPERPOD_HA_RESULT rc=0")
    )
    assert (output["rc"], output["started"], output["answers_ping"]) == (0, True, False)


def test_output_without_the_result_line_is_refused() -> None:
    with pytest.raises(ScriptOutputRejected, match="did not finish"):
        parse_script_output("before=not-running\naction=started\n")
