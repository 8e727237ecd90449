"""One lab per machine: every run, and the lab tests, hold ``/tmp/hyperpod-lab.lock``."""

from __future__ import annotations

import contextlib
import fcntl
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Final

from hyperpod_ha.observability import logger

LOCK_PATH: Final = Path(tempfile.gettempdir()) / "hyperpod-lab.lock"


class _LabLock:
    """``flock`` on :data:`LOCK_PATH`, re-entrant within this process: the test module holds
    it for all its scenarios, and each scenario takes it again (a second ``flock`` on another
    descriptor of the same process would wait for itself)."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._depth = 0
        self._handle: IO[str] | None = None

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        with self._guard:
            if self._depth == 0:
                handle = LOCK_PATH.open("w")
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    logger.info("waiting for the lab lock", extra={"lock": str(LOCK_PATH)})
                    fcntl.flock(handle, fcntl.LOCK_EX)
                self._handle = handle
            self._depth += 1
        try:
            yield
        finally:
            with self._guard:
                self._depth -= 1
                if self._depth == 0 and self._handle is not None:
                    self._handle.close()  # closing the descriptor releases the flock
                    self._handle = None


_lab_lock = _LabLock()


def lab_lock() -> contextlib.AbstractContextManager[None]:
    """Hold the machine's lab lock (re-entrant within this process)."""
    return _lab_lock.held()
