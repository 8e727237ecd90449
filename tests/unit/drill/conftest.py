"""The drill's node script tests' stand-ins."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest


@pytest.fixture
def node(tmp_path: Path) -> Path:
    """A bin directory of stand-ins: each appends its arguments to calls.log."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    scripts = {
        "scontrol": 'echo "scontrol $*" >> "$LOG"; exit "${SCONTROL_RC:-0}"',
        # `systemctl show`: no unit says which slurmctld the node runs (its PATH's does).
        "systemctl": '[ "$1" = show ] && exit 0; echo "systemctl $*" >> "$LOG"',
        "pgrep": '[ -n "${PIDS:-}" ] && echo "$PIDS" | tr , "\\n" || exit 1',
        "squeue": 'echo "squeue $*" >> "$LOG"; printf "4 RUNNING\\n5 PENDING\\n"',
        "sacct": 'echo "sacct $*" >> "$LOG"; echo "3|COMPLETED|0:0"',
        "sbatch": 'echo "sbatch $*" >> "$LOG"; echo "101;cluster"',
    }
    for name, body in scripts.items():
        path = bin_dir / name
        path.write_text(f"#!/bin/bash\n{body}\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return tmp_path
