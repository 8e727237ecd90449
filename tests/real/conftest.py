"""The real tier's lab fixture: one lab per test module, up (reused when healthy), down at the
module's end. The drill's and the scenarios' modules bring their lab up themselves.

Several labs run at once, one per test worker (``pytest -n N --dist loadscope``): with
``HYPERPOD_LAB_SLOT`` set, worker ``gwK`` takes the slot K after it (its own names, addresses, root and
database: hyperpod_lab.topology). A worker runs whole modules (or classes: the scenarios
are split into three), so the tests of one share its lab. (Not ``--dist loadgroup``: its
groups are lost with pytest 9.2, whose node ids xdist 3.8 can no longer rename.)"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator

import pytest

from hyperpod_lab import Lab
from hyperpod_lab.topology import SLOT_ENV
from tests.real.lab_support import lab_session

# Only when the run names its first slot (make test's lab tiers): every worker of any other run
# collects this file too, and the unit tests expect slot 0's defaults. Read when a lab is made.
_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
if os.environ.get(SLOT_ENV, "").isdigit() and _worker.startswith("gw") and _worker[2:].isdigit():
    os.environ[SLOT_ENV] = str(int(os.environ[SLOT_ENV]) + int(_worker[2:]))


@pytest.fixture(scope="module")
def db_password() -> str:
    return secrets.token_urlsafe(18)


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    with lab_session() as lab:
        yield lab


@pytest.fixture
def running(lab: Lab, db_password: str) -> Lab:
    """The lab, up: reused when healthy, so each test is independent of the others' order."""
    lab.up(db_password, install_packages=False)
    return lab
