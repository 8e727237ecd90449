"""The lab's floods (hyperpod_lab.floods), where no root and no running lab are needed: what a
flood runs, as whom and for how long, and what it refuses. Their effect on a real slurmctld:
tests/real/test_lab_early_warning.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hyperpod_lab import Lab, LabError, Topology
from hyperpod_lab import floods as floods_module
from hyperpod_lab.faults import FAULTS, LabFaultError, check
from hyperpod_lab.floods import FLOOD_JOB_NAME, MAX_FLOOD_SECONDS, SCRIPTS


def _lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Lab, list[list[str]]]:
    lab = Lab(Topology(root=tmp_path / "lab"))
    spawned: list[list[str]] = []

    def spawn(argv: list[str], output: Path, **_: Any) -> int:
        spawned.append(list(argv))
        return 999_999_999  # no such process: the flood reads as ended

    monkeypatch.setattr(floods_module, "spawn", spawn)
    monkeypatch.setattr(lab, "holder", lambda host: 4242)
    return lab, spawned


@pytest.mark.parametrize("kind", ["rpc-flood", "job-flood"])
def test_a_flood_runs_as_an_ordinary_user_for_a_bounded_time(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lab, spawned = _lab(tmp_path, monkeypatch)
    said = lab.flood("node1", kind)
    (argv,) = spawned
    assert argv[:3] == ["nsenter", "--target=4242", "--net"]
    at = argv.index("setpriv")
    assert argv[at : at + 4] == ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    assert argv[argv.index("timeout") : argv.index("timeout") + 4] == ["timeout", "-k", "5", "120"]
    assert argv[argv.index("-c") + 1] == SCRIPTS[kind]
    assert said.endswith("as nobody on node1 for at most 120 s (or until heal)")
    record = json.loads((tmp_path / "lab" / "floods" / "node1.json").read_text())
    assert (record["kind"], record["host"], record["until"] - record["started"]) == (kind, "node1", 120)


@pytest.mark.parametrize("script", list(SCRIPTS.values()))
def test_the_scripts_are_bash(script: str) -> None:
    subprocess.run(["bash", "-n", "-c", script], check=True)


def test_the_floods_name_their_jobs_for_heal_to_cancel() -> None:
    assert f"--job-name={FLOOD_JOB_NAME}" in SCRIPTS["job-flood"]
    assert "--hold" in SCRIPTS["rpc-flood"]


@pytest.mark.parametrize(
    ("host", "kind", "changes", "why"),
    [
        ("ctl1", "rpc-flood", {}, "rpc-flood runs as a user of a compute node; ctl1 is a controller"),
        ("node1", "fork-bomb", {}, "no flood 'fork-bomb'"),
        ("node1", "rpc-flood", {"seconds": MAX_FLOOD_SECONDS + 1}, "a flood lasts 1-600 s"),
        ("node1", "rpc-flood", {"loops": 65}, "a flood has 1-64 loops"),
    ],
)
def test_what_a_flood_refuses(
    host: str, kind: str, changes: dict[str, int], why: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lab, spawned = _lab(tmp_path, monkeypatch)
    with pytest.raises(LabError, match=why):
        lab.flood(host, kind, **changes)
    assert spawned == []


def test_the_faults_are_for_compute_nodes_and_heal_ends_them(tmp_path: Path) -> None:
    lab = Lab(Topology(root=tmp_path / "lab"))
    for fault in ("rpc-flood", "job-flood"):
        assert FAULTS[fault].computes_only
        with pytest.raises(LabFaultError, match=f"{fault} applies to compute nodes"):
            check(lab, fault, "ctl1")
    assert "end a flood" in FAULTS["heal"].summary
    assert lab.stop_flood("node1") is None  # none runs: nothing to stop


def test_the_first_dropped_record_is_the_first_step_purge_or_discard() -> None:
    """As the lab's 24.11.5 logs them (src/plugins/accounting_storage/slurmdbd/slurmdbd_agent.c)."""
    import time

    from hyperpod_ha_dev.simulation.lab.early_warning import first_dropped_record

    filling = (
        "[2026-12-06T12:06:43.006] error: agent queue filling (5000), MaxDBDMsgs=10000, RESTART SLURMDBD NOW"
    )
    nothing = (
        "[2026-12-06T12:06:53.100] accounting_storage/slurmdbd: _max_dbd_msg_action: purge 0 step records"
    )
    purged = (
        "[2026-12-06T12:06:53.271] accounting_storage/slurmdbd: _max_dbd_msg_action: purge 184 step records"
    )
    full = "[2026-12-06T12:06:54.405] error: agent queue is full (10000), discarding DBD_JOB_START:1 request"
    at = first_dropped_record("\n".join([filling, nothing, purged, full]))
    assert at == time.mktime(time.strptime("2026-12-06T12:06:53", "%Y-%m-%dT%H:%M:%S")) + 0.271
    assert first_dropped_record("\n".join([filling, nothing])) is None
    assert first_dropped_record(full) is not None
