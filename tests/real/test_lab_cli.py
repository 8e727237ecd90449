"""``hyperpod-ha lab ...`` against the real lab: an operator's session, seen through the command.

On Slurm 24.11 the standby is made unable to read the heartbeat, then the primary is killed:
``lab verify --json`` must say DOWN and why, in the standby's words. On 22.05 the same faults
end in a takeover (22.05 does not check the heartbeat file before it takes over).

Needs root, network namespaces and MariaDB; skipped otherwise, failed under CI=true.
"""

from __future__ import annotations

import json
import os

import pytest

from hyperpod_ha_cli.main import main
from hyperpod_ha_dev.simulation.lab import restore_lab
from hyperpod_lab import Lab
from tests.real.lab_support import SLURM

pytestmark = [pytest.mark.lab, pytest.mark.slow]


def _run(capfd: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    # The command points this process's stdout at stderr once it holds its result: put it back.
    saved = os.dup(1)
    try:
        code = main(["lab", *argv])
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    captured = capfd.readouterr()
    # pytest's capture also replaces sys.stdout, so the functions' metric lines (EMF, which
    # the real command sends to stderr with everything but its result) land in ``out`` here.
    out = "".join(line for line in captured.out.splitlines(True) if not line.startswith('{"_aws"'))
    return code, out, captured.err


def test_an_operator_session(lab: Lab, capfd: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capfd, "up", "--slurm", SLURM)
    assert code == 0
    assert json.loads(out)["topology"]["slurm"] == SLURM
    status_before = lab.status()

    # Refused: one line, exit 2, nothing changed.
    for argv in (("fault", "explode", "ctl1"), ("fault", "kill", "ctl9"), ("fault", "stop", "node2")):
        code, _, err = _run(capfd, *argv)
        assert code == 2
        assert len(err.strip().splitlines()) == 1
    assert lab.status()["hosts"] == status_before["hosts"]

    try:
        assert _run(capfd, "fault", "heartbeat-unreadable", "ctl2")[0] == 0
        assert _run(capfd, "fault", "kill", "ctl1")[0] == 0
        code, out, _ = _run(capfd, "verify", "--json")
        result = json.loads(out)
    finally:
        restore_lab(lab)

    assert {
        "verdict",
        "active_controller",
        "reasons",
        "reason_codes",
        "redundancy",
        "standbys",
        "slurm_version",
        "incidents",
        "snapshots",
    } <= set(result)
    assert result["executions"] == 1
    assert result["slurm_version"].startswith(SLURM)
    # The lab's releases (24.11.5, 25.11.7) are affected by the September 2026 advisories.
    assert [row["advisory"] for row in result["advisories"]] == ["slurm-security-2026-09"]
    readyz = result["readyz"]
    assert set(readyz) == {"ctl1", "ctl2"}
    if SLURM == "25.11":  # Slurm's own answer: ctl1 killed refuses, ctl2 in standby (refusing) 500
        assert readyz["ctl2"]["status"] == 500
        assert readyz["ctl1"] == {"status": None, "why": "connection refused on port 6817"}
    else:
        assert readyz["ctl2"]["status"] is None
        assert "serves no /readyz" in readyz["ctl2"]["why"]
    assert result["fault"]["fault"] == "kill"
    assert 0 < result["fault_to_verdict_seconds"] < 120
    if SLURM in ("24.11", "25.11"):  # the standby refuses: it cannot read the heartbeat file
        assert code == 1
        assert result["verdict"] == "DOWN"
        assert result["active_controller"] is None
        assert result["redundancy"] == "unknown"  # no active controller: nothing to count beside it
        assert result["reason_codes"][:2] == ["no-active-controller", "takeover-refused"]
        assert result["reasons"][1].startswith("ctl2 refuses to take over")
        assert "heartbeat file could not be read" in result["reasons"][1]
        assert len(result["incidents"]) == 1
    else:
        # 22.05 takes over without checking the heartbeat file, and then cannot write it.
        assert result["active_controller"] == "ctl2"
        assert result["verdict"] in ("FAILED_OVER", "DEGRADED")

    code, out, _ = _run(capfd, "status", "--json")
    assert code == 0
    assert json.loads(out)["heartbeat_hidden_hosts"] == []
