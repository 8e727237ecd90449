"""The failover drill against the real Slurm lab (``hyperpod-ha drill start --lab``): the drill
state machine on the embedded stack, its commands run on the lab's controllers.

Brings its own lab up (two controllers, ``HYPERPOD_LAB_SLURM`` or 24.11) and down at the end,
holding the machine's lab lock for the whole module. Needs root, network namespaces and the
MariaDB server at 127.0.0.1:3306; skipped with the reason otherwise, except under CI=true.
Takes about two minutes.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hyperpod_ha_cli import drill as drill_cli
from hyperpod_ha_cli import status as status_cli
from hyperpod_ha_cli.errors import NOT_VERIFIED
from hyperpod_ha_cli.main import main
from hyperpod_ha_dev.cli import lab_drill as lab_drill_cli
from hyperpod_ha_dev.simulation.lab import restore_lab
from hyperpod_lab import Lab
from tests.real.lab_support import SLURM, lab_session

pytestmark = [pytest.mark.lab, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ("outcome", "takeover_seconds", "verified_seconds", "jobs_survived", "test_job", "hand_back")


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    with lab_session(up=True) as lab:
        yield lab


@pytest.fixture
def printed(monkeypatch: pytest.MonkeyPatch) -> list[io.StringIO]:
    """What the commands print as their result (``--json``), one text per call."""
    kept: list[io.StringIO] = []

    def stream() -> io.StringIO:
        kept.append(io.StringIO())
        return kept[-1]

    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(drill_cli, "result_stream", stream)
    # `drill start --lab` is the dev extra's, which prints through its own import.
    monkeypatch.setattr(lab_drill_cli, "result_stream", stream)
    monkeypatch.setattr(status_cli, "result_stream", stream)
    return kept


def _json(text: io.StringIO) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(text.getvalue())
    return loaded


def test_a_drill_takes_over_and_hands_back(lab: Lab, printed: list[io.StringIO]) -> None:
    code = main(["drill", "start", "--lab", "--hand-back", "--json", "--slurm", SLURM, "--controllers", "2"])
    report = _json(printed[-1])
    assert set(CONTRACT) <= set(report)
    assert (report["from"], report["to"]) == ("ctl1", "ctl2")
    measured = [entry["detail"] for entry in report["timeline"] if entry["what"].strip() == "measured"]
    assert any(m.startswith("takeover: FAILED_OVER") for m in measured), measured
    assert 0 < report["takeover_seconds"] <= report["verified_seconds"] < 60
    assert report["test_job"]["ran"], report["test_job"]
    assert report["jobs_survived"] is not False
    hand_back = report["hand_back"]
    assert hand_back["takeover_seconds"] is not None, hand_back  # ctl1 answered as active again
    assert (code, report["outcome"], report["verdict"]) == (0, "completed", "HEALTHY"), report["reasons"]
    # Slurm 24.11: ctl2, relinquishing, may deregister 127.0.0.1:6817 from slurmdbd just after ctl1
    # registered as that same address; the drill then registers ctl1 again (scontrol reconfigure).
    for attempt in report["takeover_registrations"] + hand_back["registrations"]:
        assert (attempt["registered"], attempt["error"]) == ("127.0.0.1", None), attempt
    assert main(["status", "--cluster", report["cluster"], "--lab", "--json"]) == 0
    status = _json(printed[-1])
    assert status["last_drill"]["outcome"] == report["outcome"]
    assert status["last_drill"]["hand_back"] == hand_back
    assert status["last_verdict"]["verdict"] == report["verdict"]


def test_a_drill_on_a_cluster_not_healthy_is_refused(lab: Lab, printed: list[io.StringIO]) -> None:
    restore_lab(lab)
    offsets = {host: len(lab.log(host)) for host in ("ctl1", "ctl2")}
    lab.stop_slurmdbd()
    try:
        code = main(["drill", "start", "--lab", "--json", "--slurm", SLURM, "--controllers", "2"])
        report = _json(printed[-1])
    finally:
        restore_lab(lab)
    assert (code, report["outcome"]) == (NOT_VERIFIED, "refused")
    assert report["reasons"][0].startswith("the cluster is not HEALTHY now (DEGRADED)")
    assert (report["takeover_seconds"], report["hand_back"]) == (None, None)
    for host, offset in offsets.items():
        assert "REQUEST_TAKEOVER" not in lab.log(host)[offset:], host


def test_a_drill_whose_standby_is_dead_is_refused_naming_it(lab: Lab, printed: list[io.StringIO]) -> None:
    # Issue 35, finding 10: ctl2's slurmctld killed; ctl1 serves: HEALTHY with no ready standby.
    # The drill used to send its takeover to the dead standby and fail.
    restore_lab(lab)
    offsets = {host: len(lab.log(host)) for host in ("ctl1", "ctl2")}
    lab.kill_slurmctld("ctl2")
    try:
        code = main(["drill", "start", "--lab", "--json", "--slurm", SLURM, "--controllers", "2"])
        report = _json(printed[-1])
    finally:
        restore_lab(lab)
    assert (code, report["outcome"]) == (NOT_VERIFIED, "refused"), report["reasons"]
    assert report["reasons"][0].startswith("the target ctl2 is not a ready standby ("), report["reasons"]
    assert (report["verdict"], report["redundancy"], report["standbys"]) == ("HEALTHY", "none", [])
    assert (report["takeover_seconds"], report["hand_back"]) == (None, None)
    for host, offset in offsets.items():
        assert "REQUEST_TAKEOVER" not in lab.log(host)[offset:], host
