"""Waiting for a condition of the lab."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def poll(check: Callable[[], T | None], timeout: float, interval: float = 0.2) -> T | None:
    """The first non-None answer of ``check`` within ``timeout`` seconds, else None."""
    deadline = time.monotonic() + timeout
    while True:
        answer = check()
        if answer is not None:
            return answer
        if time.monotonic() >= deadline:
            return None
        time.sleep(interval)
