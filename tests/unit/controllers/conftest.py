"""The fake controller the probe script's tests run it on."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from hyperpod_ha_dev import CAPTURES
from tests.fakes.probe_host import ProbeHost, fixture, prints


@pytest.fixture
def controller(tmp_path: Path) -> Iterator[ProbeHost]:
    """ctl1 as in capture 03: primary, all up, slurmdbd answering."""
    fake = ProbeHost(root=tmp_path)
    fake.state.mkdir()
    shutil.copy(CAPTURES / "heartbeat_writer0.bin", fake.state / "heartbeat")
    fake.log.write_text(fixture("slurmctld_log_ctl1_primary.txt"))
    # A process standing in for slurmctld: the probe reads its /proc status.
    fake.daemon = subprocess.Popen(["sleep", "600"])
    (tmp_path / "show_config.txt").write_text(fake.show_config())
    fake.commands = {
        "scontrol": (
            'case "$1" in\n'
            f"  ping) {prints('ping_all_up.txt')};;\n"
            f"  show) cat '{tmp_path / 'show_config.txt'}'; exit 0;;\n"
            "esac\nexit 2\n"
        ),
        "sinfo": prints("sinfo_idle.txt"),
        "sdiag": "echo 'DBD Agent queue size: 0'\necho 'Server thread count: 3'\necho 'Other: 1'\n",
        "sacctmgr": (
            f'case "$*" in\n  *ping*) {prints("sacctmgr_ping_invalid_keyword.txt", 1)};;\n'
            f"  *) {prints('sacctmgr_cluster_ctl1.txt')};;\nesac\n"
        ),
        "systemctl": 'echo active\n[ "$2" = slurmctld ] || exit 3\n',
        "pgrep": f'[ "$2" = slurmctld ] && echo {fake.daemon.pid}\nexit 0\n',
        "uname": "echo ctl1\n",
        "ip": (
            "echo '1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever'\n"
            "echo '2: eth0    inet 10.214.0.11/24 brd 10.214.0.255 scope global eth0\\   valid_lft forever'\n"
            "echo '2: eth0    inet6 fe80::1/64 scope link \\       valid_lft forever preferred_lft forever'\n"
        ),
    }
    yield fake
    for process in (fake.daemon,):
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
