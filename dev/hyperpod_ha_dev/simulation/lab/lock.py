"""One user of a lab at a time: every run, and the lab tests, hold the lab's lock,
``/tmp/hyperpod-lab.lock`` for slot 0's lab, ``/tmp/hyperpod-lab-<slot>.lock`` for another slot's
(labs of different slots share nothing, so each has its own)."""

from __future__ import annotations

import contextlib
import fcntl
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Final

from hyperpod_ha.observability import logger
from hyperpod_lab.topology import current_slot

LOCK_PATH: Final = Path(tempfile.gettempdir()) / "hyperpod-lab.lock"


def lock_path(slot: int) -> Path:
    return LOCK_PATH if slot == 0 else LOCK_PATH.with_name(f"hyperpod-lab-{slot}.lock")


class _LabLock:
    """``flock`` on this process's slot's :func:`lock_path`, re-entrant within this process: the
    test module holds it for all its scenarios, and each scenario takes it again (a second
    ``flock`` on another descriptor of the same process would wait for itself)."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._depth = 0
        self._handle: IO[str] | None = None

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        with self._guard:
            if self._depth == 0:
                path = lock_path(current_slot())
                handle = path.open("w")
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    logger.info("waiting for the lab lock", extra={"lock": str(path)})
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
    """Hold this process's slot's lab lock (re-entrant within this process)."""
    return _lab_lock.held()
