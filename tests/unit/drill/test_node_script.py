"""The drill's node script, run by real bash exactly as the template's documents give it,
with small Slurm stand-ins on PATH that record what they were asked."""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hyperpod_ha.commands import CommandRequest
from hyperpod_ha.drill.node import jobs_parameters, parse_node_output, takeover_parameters
from hyperpod_ha_dev.simulation.agent import DocumentParametersRejected, agent_command_line
from hyperpod_ha_stack.template import load_template, with_fixed_values
from tests.conftest import ROOT
from tests.fakes.slurmctld_processes import AS_ROOT, OTHER_USER, SlurmctldProcesses

TEMPLATE = load_template(ROOT / "template.yaml")


class TemplateDocuments:
    """``ssm.get_document`` answered from template.yaml."""

    def get_document(self, Name: str) -> dict[str, Any]:
        content = TEMPLATE["Resources"][Name]["Properties"]["Content"]
        return {"Content": json.dumps(with_fixed_values(TEMPLATE, content))}


def run(node: Path, document: str, parameters: dict[str, list[str]], **env: str) -> tuple[str, list[str]]:
    line = agent_command_line(CommandRequest("target", document, 30, parameters), TemplateDocuments())
    done = subprocess.run(
        shlex.split(line),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={"PATH": f"{node / 'bin'}:/usr/bin:/bin", "LOG": str(node / "calls.log"), **env},
    )
    log = node / "calls.log"
    return done.stdout, log.read_text().splitlines() if log.exists() else []


def test_takeover_runs_scontrol_takeover_with_the_index(node: Path) -> None:
    out, calls = run(node, "FailoverDrillTakeoverDocument", takeover_parameters(2))
    assert calls == ["scontrol takeover 2"]
    assert parse_node_output(out).rc == 0


def test_a_refused_takeover_reports_its_exit_code(node: Path) -> None:
    out, _ = run(node, "FailoverDrillTakeoverDocument", takeover_parameters(1), SCONTROL_RC="1")
    assert parse_node_output(out).rc == 1


def test_hand_back_starts_the_stopped_primary(node: Path) -> None:
    out, calls = run(node, "FailoverDrillTakeoverDocument", takeover_parameters(0))
    assert calls == ["systemctl start slurmctld"]
    assert parse_node_output(out).values["slurmctld"] == "stopped"


@pytest.fixture
def processes() -> Iterator[SlurmctldProcesses]:
    with SlurmctldProcesses.made() as made:
        yield made


def _with_slurm(node: Path, processes: SlurmctldProcesses) -> str:
    """The PATH of a node whose Slurm binary is ``processes.node_binary``."""
    return f"{node / 'bin'}:{processes.node_binary.parent}:/usr/bin:/bin"


def test_hand_back_asks_for_control_from_the_nodes_running_slurmctld(
    node: Path, processes: SlurmctldProcesses
) -> None:
    pid = processes.start()
    out, calls = run(
        node,
        "FailoverDrillTakeoverDocument",
        takeover_parameters(0),
        PIDS=str(pid),
        PATH=_with_slurm(node, processes),
    )
    assert parse_node_output(out).values["slurmctld"] == "running"
    assert calls == ["scontrol show config", "scontrol takeover 0"]


@pytest.mark.parametrize("impostor", ["another binary", "another user"])
def test_hand_back_starts_slurmctld_beside_a_process_that_is_only_named_so(
    node: Path, processes: SlurmctldProcesses, impostor: str
) -> None:
    # Issue 35, finding 5: the hand-back ran `scontrol takeover 0` and the primary stayed down.
    if impostor == "another user" and not AS_ROOT:
        pytest.skip("starting a process as another user needs root")
    if impostor == "another binary":
        pid = processes.start(processes.binary("elsewhere"))
    else:
        pid = processes.start(user=OTHER_USER)
    out, calls = run(
        node,
        "FailoverDrillTakeoverDocument",
        takeover_parameters(0),
        PIDS=str(pid),
        PATH=_with_slurm(node, processes),
    )
    assert parse_node_output(out).values["slurmctld"] == "stopped"
    assert calls == ["scontrol show config", "systemctl start slurmctld"]


def test_list_gives_squeue_states_and_sacct_for_jobs_no_longer_queued(node: Path) -> None:
    out, calls = run(node, "FailoverDrillJobsDocument", jobs_parameters("list", ["4", "3"]))
    output = parse_node_output(out)
    assert output.jobs == {"4": "RUNNING", "5": "PENDING"}
    assert output.accounted == {"3": ("COMPLETED", "0:0")}
    assert calls[1] == "sacct -n -X -P -j 3 -o JobID,State,ExitCode"


def test_submit_gives_the_job_id(node: Path) -> None:
    out, calls = run(node, "FailoverDrillJobsDocument", jobs_parameters("submit"))
    assert parse_node_output(out).values["submitted"] == "101"
    assert calls == ["sbatch --parsable -J hyperpod-ha-drill -o /dev/null -t 1 --wrap true"]


@pytest.mark.parametrize(
    ("document", "parameters"),
    [
        ("FailoverDrillTakeoverDocument", {"controllerIndex": ["1; reboot"]}),
        ("FailoverDrillTakeoverDocument", {"controllerIndex": ["10"]}),
        ("FailoverDrillTakeoverDocument", {"command": ["id"]}),
        ("FailoverDrillJobsDocument", {"action": ["cancel"], "jobIds": ["none"]}),
        ("FailoverDrillJobsDocument", {"action": ["list"], "jobIds": ["4 5"]}),
        ("FailoverDrillJobsDocument", {"action": ["list"], "jobIds": ["$(id)"]}),
        ("FailoverDrillAccountingDocument", {"command": ["id"]}),
    ],
)
def test_the_documents_take_nothing_but_their_narrow_parameters(
    document: str, parameters: dict[str, list[str]]
) -> None:
    with pytest.raises(DocumentParametersRejected):
        agent_command_line(CommandRequest("target", document, 30, parameters), TemplateDocuments())


def test_the_callers_parameters_match_the_documents_patterns() -> None:
    with pytest.raises(ValueError, match="0-9"):
        takeover_parameters(10)
    with pytest.raises(ValueError, match="numeric"):
        jobs_parameters("list", ["4;id"])
    declared = TEMPLATE["Resources"]["FailoverDrillJobsDocument"]["Properties"]["Content"]["parameters"]
    assert set(jobs_parameters("list", ["1"])) == set(declared)
