"""Whether this machine can run the lab at all, and why not."""

from __future__ import annotations

import os
import subprocess

from hyperpod_lab.accounting_db import AdminConnection
from hyperpod_lab.processes import LabError


def missing_prerequisite() -> str | None:
    """The first thing the lab needs that this machine lacks, or ``None``."""
    if os.geteuid() != 0:
        return "the Slurm lab needs root"
    try:
        probe = subprocess.run(
            ["unshare", "--net", "--uts", "--mount", "true"], capture_output=True, check=False
        )
    except FileNotFoundError:
        return "the Slurm lab needs unshare (util-linux)"
    if probe.returncode != 0:
        return "the Slurm lab needs network, UTS and mount namespaces (unshare failed)"
    try:
        AdminConnection().connect().close()
    except LabError as exc:
        return f"the Slurm lab needs MariaDB: {exc.reason}"
    return None
