"""The real tier's lab fixture: one lab per test module, up (reused when healthy), down at the
module's end. Modules that need another lab (the CLI's, the scenarios') define their own ``lab``."""

from __future__ import annotations

import fcntl
import os
import secrets
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from hyperpod_lab import Lab, Topology
from hyperpod_lab.packages import ensure_packages
from hyperpod_lab.preflight import missing_prerequisite
from hyperpod_lab.releases import release
from tests.real.lab_support import SLURM


@pytest.fixture(scope="module")
def db_password() -> str:
    return secrets.token_urlsafe(18)


@pytest.fixture(scope="module")
def lab(db_password: str) -> Iterator[Lab]:
    missing = missing_prerequisite()
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing} (CI=true: the lab tests must run)")
        pytest.skip(missing)
    ensure_packages(release(SLURM).packages)
    # One lab per machine (its names are fixed): keep parallel test workers apart.
    with (Path(tempfile.gettempdir()) / "hyperpod-lab.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        lab = Lab(Topology(controllers=2, nodes=2, slurm=SLURM))
        try:
            yield lab
        finally:
            lab.down()


@pytest.fixture
def running(lab: Lab, db_password: str) -> Lab:
    """The lab, up: reused when healthy, so each test is independent of the others' order."""
    lab.up(db_password, install_packages=False)
    return lab
