"""The controller host the probe script's tests run it on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.probe_host import ProbeHost


@pytest.fixture
def controller(tmp_path: Path) -> Iterator[ProbeHost]:
    """ctl1 as in capture 03: primary, all up, slurmdbd answering."""
    host = ProbeHost.ctl1_primary(tmp_path)
    yield host
    host.close()
