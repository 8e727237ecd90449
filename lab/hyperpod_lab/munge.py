"""munge for the lab: one munged per lab host, plus the machine's for the login host.

Every lab host binds its own directory onto /run/munge and runs its own munged there (see
:func:`host_command`); they share the machine's key. The login host (the machine's own
namespace, where client commands run) uses the machine's munged: if one already answers,
the lab uses it and leaves it alone; otherwise the first lab up starts one (as the munge user)
and the last lab down stops it (:mod:`hyperpod_lab.machine`).
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


def start(lab_dir: Path) -> int:
    """Start the machine's munged with its files in ``lab_dir``; return its PID."""
    ensure_key()
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
        raise LabError(f"munged did not start; see {lab_dir / 'munged.log'}") from None
    return pid


def prepare_run_dir(run_dir: Path) -> None:
    """A host's own /run/munge (bound there in its mount namespace), owned by the munge user."""
    ensure_key()
    run_dir.mkdir(mode=0o755, parents=True, exist_ok=True)
    shutil.chown(run_dir, MUNGE_USER, MUNGE_USER)
    RUN_DIR.mkdir(mode=0o755, parents=True, exist_ok=True)  # the mount point


def host_command(run_dir: Path) -> list[str]:
    """munged for one host, run inside it (its /run/munge is ``run_dir``), as the munge user.

    Each instance of a cluster runs its own munged. One for every lab host would decode a job
    step's launch credential once per node, and munge refuses the second decode as a replay
    (Slurm 24.11's slurmd then logs ``_verify_signature: failed decode``).
    """
    return [
        "setpriv",
        f"--reuid={MUNGE_USER}",
        f"--regid={MUNGE_USER}",
        "--init-groups",
        "munged",
        "--foreground",
        f"--pid-file={run_dir / 'munged.pid'}",
        f"--seed-file={run_dir / 'munged.seed'}",
        f"--log-file={run_dir / 'munged.log'}",
    ]
