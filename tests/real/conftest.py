"""The real tier's lab fixture: one lab per test module, up (reused when healthy), down at the
module's end. The drill's and the scenarios' modules bring their lab up themselves."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest

from hyperpod_lab import Lab
from tests.real.lab_support import lab_session


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
