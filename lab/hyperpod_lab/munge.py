"""One munged for the whole machine: its socket is a file, so every namespace reaches it.

If a munged already answers, the lab uses it and leaves it alone. Otherwise the lab starts
its own (as the munge user, with its PID, seed and log files under the lab's root) and
stops it at teardown.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from hyperpod_lab.processes import CLEAN_ENV, LabError, run, spawn, wait_until

KEY = Path("/etc/munge/munge.key")
RUN_DIR = Path("/run/munge")
MUNGE_USER = "munge"


def answers() -> bool:
    """Whether a credential can be made and decoded through the socket now."""
    try:
        made = subprocess.run(
            ["munge", "-n"], capture_output=True, timeout=5, check=False, env=dict(CLEAN_ENV)
        )
        if made.returncode != 0:
            return False
        decoded = subprocess.run(
            ["unmunge"], input=made.stdout, capture_output=True, timeout=5, check=False, env=dict(CLEAN_ENV)
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return decoded.returncode == 0


def ensure_key() -> None:
    """The Debian package creates the key; a machine without one gets one (and keeps it)."""
    if KEY.exists():
        return
    run(["mungekey", "--create", f"--keyfile={KEY}"])
    shutil.chown(KEY, MUNGE_USER, MUNGE_USER)
    KEY.chmod(0o600)


def start(lab_dir: Path) -> tuple[int, bool]:
    """Start munged; return its PID and whether the lab created /run/munge for it."""
    ensure_key()
    created_run_dir = not RUN_DIR.exists()
    for directory, mode in ((RUN_DIR, 0o755), (lab_dir, 0o700)):
        directory.mkdir(mode=mode, parents=True, exist_ok=True)
        shutil.chown(directory, MUNGE_USER, MUNGE_USER)
    pid = spawn(
        [
            "munged",
            "--foreground",
            f"--pid-file={lab_dir / 'munged.pid'}",
            f"--seed-file={lab_dir / 'munged.seed'}",
            f"--log-file={lab_dir / 'munged.log'}",
        ],
        lab_dir / "munged.out",
        user=MUNGE_USER,
    )
    try:
        wait_until(lambda: True if answers() else None, timeout=10, what="munged to answer")
    except LabError:
        raise LabError("munged did not start; see munged.log under the lab's munge directory") from None
    return pid, created_run_dir
