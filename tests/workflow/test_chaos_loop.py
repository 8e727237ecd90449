"""The chaos loop on the embedded stack, with the simulated controllers standing in for the lab
(the lab's own run is tests/real/test_lab_chaos.py): a "fault" swaps the simulated cluster for
one whose controllers are both down (nothing published: the watchdog's ticks must find it), its
heal swaps the healthy one back, and a line the ON/OFF programs would write is published.

What can fail here: the ticks go on through the fault and the heal, the fault is detected, the
incident the watchdog's run opened is resolved by the recovery tick's run during the settle, the
final verdict is the one after the heal, the counts are read from the stack, and it passes."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hyperpod_ha.commands import register_transport
from hyperpod_ha_dev.simulation import engine
from hyperpod_ha_dev.simulation.cluster import TRANSPORT
from hyperpod_ha_dev.simulation.lab import chaos
from hyperpod_ha_dev.simulation.lab.chaos_plan import ChaosPlan, PlannedFault
from hyperpod_ha_dev.simulation.scenarios import CTL1, CTL1_INSTANCE, CTL2, CTL2_INSTANCE, SCENARIOS
from tests.conftest import ROOT

pytestmark = pytest.mark.slow


@dataclass
class _Paths:
    root: Path
    node_secret_dir: Path


@dataclass
class StandInLab:
    """What the loop asks of the lab, answered by the simulated cluster of the scenario in place."""

    paths: _Paths
    status_log: list[str] = field(default_factory=list)
    injected: list[tuple[str, str]] = field(default_factory=list)

    def is_up(self) -> bool:
        return True

    def controllers(self) -> list[dict[str, str]]:
        return [
            {"instance_id": CTL1_INSTANCE, "private_ip": CTL1.address, "hostname": CTL1.name},
            {"instance_id": CTL2_INSTANCE, "private_ip": CTL2.address, "hostname": CTL2.name},
        ]

    def controller_status_messages(self) -> list[str]:
        return list(self.status_log)


class _NoSecret:
    def __init__(self, _: Path) -> None:
        pass

    def close(self) -> None:
        pass


def _swap(scenario: str) -> None:
    old = engine._current.cluster
    engine._current.cluster = engine.cluster_for(SCENARIOS[scenario], ROOT)
    engine._current.cluster.anchor_now()
    if old is not None:
        old.close()


def test_the_loop_counts_a_fault_the_ticks_find_and_passes_after_the_heal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lab = StandInLab(_Paths(tmp_path, tmp_path / "secret"))

    def inject(_: Any, fault: str, host: str) -> dict[str, Any]:
        lab.injected.append((fault, host))
        if fault == "stop":
            _swap("silent-failure")
            lab.status_log.append("2026-12-04T10:00:00Z Slurm Controller is OFF (10.214.0.11, Backup Node)")
        else:
            _swap("healthy")
        return {"fault": fault, "host": host, "summary": f"{fault} (stand-in)", "at": time.time()}

    monkeypatch.setattr(chaos, "restore_lab", lambda _: [])
    monkeypatch.setattr(chaos, "attached_agent", lambda *_: contextlib.nullcontext())
    monkeypatch.setattr(chaos, "NodeSecret", _NoSecret)
    monkeypatch.setattr(chaos, "LAB_TRANSPORT", TRANSPORT)
    monkeypatch.setattr(chaos, "inject", inject)
    monkeypatch.setattr(chaos, "clear", lambda _: None)
    monkeypatch.setattr(chaos, "TICK_SECONDS", 1.0)
    monkeypatch.setattr(chaos, "SETTLE_SECONDS", 90.0)
    register_transport(TRANSPORT, engine._runner)
    _swap("healthy")
    # Long enough for the run the first tick after it starts to end DOWN (three checks 5 s apart).
    plan = ChaosPlan(5, 0.8, (PlannedFault(3.0, "stop", "ctl1", "cont", 40.0),))
    said: list[str] = []
    try:
        result = chaos.run_chaos(lab, ROOT, plan, "off", said.append)  # type: ignore[arg-type]
    finally:
        cluster, engine._current.cluster = engine._current.cluster, None
        if cluster is not None:
            cluster.close()

    data = result.to_json()
    assert lab.injected == [("stop", "ctl1"), ("cont", "ctl1")]
    (fault,) = data["faults"]
    assert fault["injected"] is True
    assert any(label.startswith("DOWN") for label in fault["verdicts_seen"]), fault
    assert fault["detection_seconds"] is not None
    assert fault["detection_seconds"] >= 0
    assert data["published"] == 1
    # The fault's run, and the recovery tick's own run, unless the fault's run was still checking
    # when the heal came (a loaded machine: the tick joins it, and it ends HEALTHY itself).
    assert data["runs_started"] >= 1
    assert data["incidents_opened"] >= 1
    assert data["incidents_open_at_end"] == 0, data["incidents"]
    assert data["duplicate_ops_items"] == 0
    assert data["leases_held_at_end"] == 0
    assert data["uncaught_failures"] == 0, data["uncaught_failure_executions"]
    assert data["final_verdict"] == "HEALTHY"
    assert data["passed"] is True, data["failures"]
    assert any(line.startswith("settled") for line in said), said
