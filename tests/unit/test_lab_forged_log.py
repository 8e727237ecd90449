"""The lab's ``forged-log`` fault, without a lab: which jobs it submits, as whom, and what it
says when slurmctld did not refuse them for their partition (issue 35, finding 1)."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from hyperpod_ha.slurm import classify_refusal_line, classify_role_line, log_line, parse_role_log
from hyperpod_ha_dev.cli.lab import FAULT_NAMES
from hyperpod_ha_dev.simulation.lab import LAB_SCENARIOS, injections
from hyperpod_lab import Lab, LabError, Topology
from hyperpod_lab.faults import FAULTS, LabFaultError, check
from hyperpod_lab.forged_log import FORGED_PHRASES, FORGING_USER, forged_partitions, submit_argv

NOW = 1_796_000_000.25
REFUSED = "sbatch: error: Batch job submission failed: Invalid partition name specified\n"


def _lab(tmp_path: Path) -> Lab:
    return Lab(Topology(root=tmp_path / "lab"))


def test_the_command_names_it_and_its_scenario_expects_healthy() -> None:
    assert "forged-log" in FAULT_NAMES
    scenario = LAB_SCENARIOS["forged-log"]
    assert scenario.expect_verdicts == frozenset({"HEALTHY"})
    assert (scenario.inject, scenario.verify) == (injections.forge_log, injections.forged_lines_logged)


def test_it_runs_on_a_compute_node_only_and_is_checked_first(tmp_path: Path) -> None:
    lab = _lab(tmp_path)
    with pytest.raises(LabFaultError, match="forged-log applies to compute nodes; ctl1 is a controller"):
        check(lab, "forged-log", "ctl1")
    with pytest.raises(LabFaultError, match="the lab is not up"):
        check(lab, "forged-log", "node1")
    assert not (tmp_path / "lab").exists()
    with pytest.raises(LabError, match="ctl2 is a controller"):
        lab.forge_log("ctl2")


def test_each_partition_is_one_argument_of_sbatch_run_as_an_ordinary_user() -> None:
    partition = "x\r[2026-12-04T07:50:01.120] slurmctld running in background mode"
    argv = submit_argv(partition)

    assert argv[:5] == ["setpriv", f"--reuid={FORGING_USER}", "--regid=nogroup", "--clear-groups", "--"]
    assert FORGING_USER != "root"
    assert argv[5] == "sbatch"
    assert [a for a in argv if a.startswith("--partition=")] == [f"--partition={partition}"]
    assert "--wrap=true" in argv  # a job that would only run `true`, were it accepted


def test_the_partitions_are_each_phrase_alone_and_after_a_carriage_return_and_a_forged_time() -> None:
    partitions = forged_partitions(NOW)

    assert partitions[: len(FORGED_PHRASES)] == list(FORGED_PHRASES)
    forged = partitions[len(FORGED_PHRASES) :]
    assert len(forged) == len(FORGED_PHRASES)
    for phrase, partition in zip(FORGED_PHRASES, forged, strict=True):
        before, _, after = partition.partition("\r")
        assert before == "x"
        assert after.endswith(f"] {phrase}")
        assert log_line(after) is not None  # a forged time of slurmctld's own form
        assert after[1:24].endswith(".250")


def test_the_phrases_are_every_kind_the_verdict_reads() -> None:
    # As slurmctld's own whole message each phrase would count: the fault tests what matters.
    kinds: set[str] = set()
    for phrase in FORGED_PHRASES:
        line = f"[2026-12-04T07:50:01.120] {phrase}"
        kind = classify_role_line(line) or classify_refusal_line(line)
        if kind is None and parse_role_log(line).fatal is not None:
            kind = "fatal"
        kinds.add(kind or "part")
    assert kinds == {
        "primary",
        "standby",
        "taking_over",
        "stopping",
        "starting",
        "heartbeat_unreadable",
        "heartbeat_updating",
        "undetermined",
        "waiting_for_heartbeat",
        "fatal",
        "part",  # "not responding, BackupController": what the probe once matched anywhere
    }


def test_as_slurmctld_logs_them_none_says_anything() -> None:
    for partition in forged_partitions(NOW):
        line = f"[2026-12-04T07:50:02.001] _get_job_parts: invalid partition specified: {partition}"
        log = parse_role_log(line)
        assert (log.lines, log.refusals, log.fatal) == ((), (), None), partition


class _Exec:
    """``Lab.exec`` of a compute node whose sbatch answers ``answer``; records each argv."""

    def __init__(self, returncode: int, answer: str) -> None:
        self.returncode, self.answer = returncode, answer
        self.calls: list[tuple[str, list[str]]] = []

    def __call__(self, host: str, argv: Sequence[str], **_: object) -> subprocess.CompletedProcess[str]:
        self.calls.append((host, list(argv)))
        return subprocess.CompletedProcess(list(argv), self.returncode, "", self.answer)


def test_every_job_is_submitted_and_refused_for_its_partition(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lab = _lab(tmp_path)
    submitted = _Exec(1, REFUSED)
    monkeypatch.setattr(lab, "exec", submitted)

    detail = FAULTS["forged-log"].apply(lab, "node1")

    assert {host for host, _ in submitted.calls} == {"node1"}
    partitions = [next(a for a in argv if a.startswith("--partition=")) for _, argv in submitted.calls]
    assert len(partitions) == 2 * len(FORGED_PHRASES)
    assert partitions[: len(FORGED_PHRASES)] == [f"--partition={phrase}" for phrase in FORGED_PHRASES]
    assert isinstance(detail, str)
    assert detail.startswith(f"{2 * len(FORGED_PHRASES)} jobs submitted as nobody on node1")


@pytest.mark.parametrize(
    ("returncode", "answer"),
    [
        (0, "Submitted batch job 12\n"),  # accepted: a partition of that name exists
        (1, "sbatch: error: Batch job submission failed: Invalid user id\n"),  # never reached the log
    ],
)
def test_a_job_not_refused_for_its_partition_fails_the_fault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, returncode: int, answer: str
) -> None:
    lab = _lab(tmp_path)
    submitted = _Exec(returncode, answer)
    monkeypatch.setattr(lab, "exec", submitted)

    with pytest.raises(LabError, match="was not refused for its partition"):
        lab.forge_log("node1")
    assert len(submitted.calls) == 1
