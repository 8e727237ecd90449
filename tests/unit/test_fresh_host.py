"""The guard `make test` runs the non-lab suite through: what the host has installed is hidden."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT

GUARD = ROOT / "tests" / "fresh_host.sh"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the guard needs root (mount namespaces)")


def guarded(*argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(GUARD), *argv],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
        timeout=60,
    )


def test_a_hidden_user_does_not_exist_inside_and_still_does_outside() -> None:
    assert subprocess.run(["id", "daemon"], capture_output=True, check=False).returncode == 0
    assert guarded("id", "daemon", FRESH_HOST_USERS="daemon").returncode != 0
    assert guarded("id", "root", FRESH_HOST_USERS="daemon").returncode == 0


def test_a_hidden_directory_is_empty_inside_and_untouched_outside(tmp_path: Path) -> None:
    leftover = tmp_path / "leftover"
    leftover.mkdir()
    (leftover / "slurm.conf").write_text("ClusterName=old\n")
    inside = guarded("ls", "-A", str(leftover), FRESH_HOST_DIRS=str(leftover))
    assert inside.returncode == 0
    assert inside.stdout == ""
    assert (leftover / "slurm.conf").read_text() == "ClusterName=old\n"


def test_the_command_sees_no_daemon_of_the_host() -> None:
    processes = guarded("ps", "-e", "-o", "comm=").stdout.split()
    assert "mariadbd" not in processes
    assert len(processes) < 10, processes
