"""The real Slurm HA lab's faults: a killed, cut off or hung primary, an unwritable state directory;
and a teardown, after a successful or a failed set-up, that leaves nothing behind.

Needs root, network namespaces and the MariaDB server at 127.0.0.1:3306; skipped with the
reason otherwise, except under CI=true where a missing prerequisite fails the run.
"""

from __future__ import annotations

import subprocess
import time

import pytest

from hyperpod_ha.commands import TargetUnreachable
from hyperpod_lab import Lab, LabError
from hyperpod_lab.runner import LabRunner
from hyperpod_lab.teardown import lab_processes
from hyperpod_lab.topology import SLURMCTLD_TIMEOUT_SECONDS
from tests.real.lab_support import (
    TAKEOVER_MARGIN_SECONDS,
    command_request,
    lab_databases,
    netns,
    pid_running,
    wait_for,
)

pytestmark = [pytest.mark.lab, pytest.mark.slow]


def test_sigkill_of_the_primary_gives_takeover_by_the_backup(running: Lab) -> None:
    runner = LabRunner(running)
    ctl2_log_offset = len(running.log("ctl2"))
    killed_at = time.time()
    started = time.monotonic()

    running.kill_slurmctld("ctl1")

    def ctl2_active() -> bool:
        beat = running.heartbeat()
        log = running.log("ctl2")[ctl2_log_offset:]
        return (
            "Running as primary controller" in log
            and beat is not None
            and beat.writer_index == 1
            and beat.beat_time >= int(killed_at)
        )

    takeover = wait_for(
        ctl2_active, timeout=SLURMCTLD_TIMEOUT_SECONDS + TAKEOVER_MARGIN_SECONDS, interval=0.1
    )
    assert takeover <= SLURMCTLD_TIMEOUT_SECONDS + TAKEOVER_MARGIN_SECONDS
    # The backup counts from its last answered ping, a few seconds before the kill at most.
    assert time.monotonic() - started >= SLURMCTLD_TIMEOUT_SECONDS / 2
    assert "ControlMachine ctl1 not responding, BackupController1 ctl2 taking over" in running.log("ctl2")

    # Restarting the primary while the backup is still becoming active gives two active
    # controllers for a while: wait until the backup serves, as an operator would.
    def ctl2_serves() -> bool:
        ping = runner.run(command_request("ctl2", "scontrol ping")).stdout.splitlines()
        # Root also gets a "RESTORE SLURMCTLD DAEMON TO SERVICE" banner after the two lines.
        return ping[:2] == ["Slurmctld(primary) at ctl1 is DOWN", "Slurmctld(backup) at ctl2 is UP"]

    wait_for(ctl2_serves, timeout=10)
    ctl1_log_offset = len(running.log("ctl1"))
    ctl2_log_offset = len(running.log("ctl2"))

    # 24.11 takes control back only after the active backup saved its state and stepped down
    # (about 30 s here): no wait for its ping.
    running.start_slurmctld("ctl1", wait=False)

    def ctl1_active_again() -> bool:
        beat = running.heartbeat()
        return (
            "Running as primary controller" in running.log("ctl1")[ctl1_log_offset:]
            and "running in background mode" in running.log("ctl2")[ctl2_log_offset:]
            and beat is not None
            and beat.writer_index == 0
        )

    wait_for(ctl1_active_again, timeout=60)
    assert running.pid("ctl2", "slurmctld") is not None  # the backup went back to standby


def test_isolated_controller_is_unreachable_and_seen_down(running: Lab) -> None:
    runner = LabRunner(running)
    running.isolate("ctl2")
    try:
        with pytest.raises(TargetUnreachable):
            runner.run(command_request("ctl2", "hostname"))
        ping = runner.run(command_request("ctl1", "scontrol ping")).stdout.splitlines()
        assert ping[:2] == ["Slurmctld(primary) at ctl1 is UP", "Slurmctld(backup) at ctl2 is DOWN"]
    finally:
        running.reconnect("ctl2")
    assert runner.run(command_request("ctl2", "hostname")).stdout == "ctl2\n"


def test_unwritable_state_stops_the_heartbeat(running: Lab) -> None:
    offset = len(running.log("ctl1"))
    running.make_state_unwritable()
    try:
        wait_for(lambda: "heartbeat file creation failed" in running.log("ctl1")[offset:], timeout=10)
        touch = running.exec("ctl1", ["touch", str(running.paths.state_dir / "probe")])
        assert touch.returncode == 1
        assert "Read-only file system" in touch.stderr
    finally:
        running.restore_state_writable()
    resumed = time.time()

    def beating() -> bool:
        beat = running.heartbeat()
        return beat is not None and beat.beat_time >= int(resumed)

    wait_for(beating, timeout=10)


def test_hung_primary_answers_nothing_until_continued(running: Lab) -> None:
    running.stop_slurmctld("ctl1")
    try:
        assert running.status()["hosts"]["ctl1"]["daemons"]["slurmctld"]["stopped"] is True  # type: ignore[index]
        ping = running.exec("ctl2", ["scontrol", "ping"]).stdout.splitlines()
        assert ping[:2] == ["Slurmctld(primary) at ctl1 is DOWN", "Slurmctld(backup) at ctl2 is UP"]
    finally:
        running.cont_slurmctld("ctl1")
    ping = running.exec("ctl2", ["scontrol", "ping"]).stdout.splitlines()
    assert ping == ["Slurmctld(primary) at ctl1 is UP", "Slurmctld(backup) at ctl2 is UP"]


def test_down_leaves_nothing_behind(running: Lab) -> None:
    pids = [running.pid(host, daemon) for host, daemon in (("ctl1", "slurmctld"), ("node1", "slurmd"))]

    removed = running.down()

    assert any(item.startswith("netns ") for item in removed)
    assert running.leftovers() == []
    topology = running.topology
    assert not [name for name in netns() if name.startswith(f"{topology.prefix}-")]
    assert (
        subprocess.run(["ip", "link", "show", topology.bridge], capture_output=True, check=False).returncode
        != 0
    )
    assert not lab_databases(topology)
    assert not running.paths.root.exists()
    assert pids[0] is not None
    assert pids[1] is not None
    assert not any(pid_running(pid) for pid in pids)
    # The lab's own daemons: another lab of the machine (another test worker's) may run beside it.
    assert not [
        name
        for _, name in lab_processes(topology)
        if name in ("slurmctld", "slurmd", "slurmdbd", "slurmstepd")
    ]
    assert running.controllers() == []
    with pytest.raises(TargetUnreachable):
        LabRunner(running).run(command_request("ctl1", "hostname"))
    assert running.down() == []  # idempotent


def test_a_failed_up_leaves_nothing_behind(
    lab: Lab, db_password: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    def refuse() -> bool:
        raise LabError("injected failure while waiting for the nodes")

    lab.down()
    monkeypatch.setattr(lab, "_nodes_idle", refuse)

    with pytest.raises(LabError, match="injected failure"):
        lab.up(db_password, install_packages=False)

    assert lab.leftovers() == []
    assert db_password not in capfd.readouterr().out
