"""Keeping the bench's own output to the table: the handlers and the lab log to stdout."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def quiet_stdout() -> Iterator[None]:
    """Send file descriptor 1 to /dev/null while measuring: the handlers log every event (as they
    do in Lambda, so the cost of logging stays in the figures) and the lab logs its steps, but
    thousands of log lines are no report. Progress and errors go to stderr."""
    sys.stdout.flush()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)
