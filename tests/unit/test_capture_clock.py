"""The captures' timestamps moved to the scenario's time: spacing kept, the newest line now."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from hyperpod_ha.slurm.role_log import parse_role_log
from hyperpod_ha_dev import CAPTURES
from hyperpod_ha_dev.simulation.capture_clock import CaptureClock, latest
from hyperpod_ha_dev.simulation.fake_controller import ControllerState, FakeController
from hyperpod_ha_dev.simulation.scenarios import CTL1, CTL2

TAKEOVER = (CAPTURES / "slurmctld_log_ctl2_takeover.txt").read_text()
PRIMARY = (CAPTURES / "slurmctld_log_ctl1_primary.txt").read_text()


def test_the_newest_line_lands_now_and_the_spacing_stays() -> None:
    now = dt.datetime(2027, 3, 1, 12, 0, 0)
    clock = CaptureClock.anchored([PRIMARY, TAKEOVER], now)
    moved_takeover, moved_primary = clock.apply(TAKEOVER), clock.apply(PRIMARY)
    assert latest(moved_takeover) == now  # the takeover capture is the newer one
    before = latest(TAKEOVER)
    assert before is not None
    assert latest(moved_primary) == now - (before - latest_or_fail(PRIMARY))
    # Every line keeps its text and its place: only the timestamps change.
    old_lines, new_lines = TAKEOVER.splitlines(), moved_takeover.splitlines()
    assert len(old_lines) == len(new_lines)
    assert [line.split("] ", 1)[1] for line in old_lines] == [line.split("] ", 1)[1] for line in new_lines]
    assert new_lines[-1].startswith("[2027-03-01T12:00:00.000]")


def latest_or_fail(text: str) -> dt.datetime:
    found = latest(text)
    assert found is not None
    return found


def test_a_text_without_timestamps_is_left_as_it_is() -> None:
    clock = CaptureClock.anchored(["no time here"], dt.datetime(2027, 1, 1))
    assert clock.shift == dt.timedelta(0)
    assert clock.apply("no time here") == "no time here"


def test_the_fake_controller_logs_in_the_scenarios_time(tmp_path: Path) -> None:
    node = FakeController(tmp_path / "ctl2", CTL2, (CTL1, CTL2), CAPTURES, tmp_path / "fsx" / "state")
    node.clock = CaptureClock.anchored([TAKEOVER], dt.datetime.now())
    try:
        node.apply(ControllerState(log="slurmctld_log_ctl2_takeover.txt"))
    finally:
        node.close()
    # The node-local log path every simulated node uses in turn, as the shared slurm.conf names it.
    log = parse_role_log((node.local_dir / "slurmctld.log").read_text())
    assert log.last is not None
    assert log.last.event == "primary"
    assert log.last.timestamp is not None
    age = dt.datetime.now() - dt.datetime.fromisoformat(log.last.timestamp)
    assert dt.timedelta(0) <= age < dt.timedelta(minutes=5)
