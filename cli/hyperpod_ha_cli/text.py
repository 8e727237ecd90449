"""How the command's plain output reads: times, reasons, figures (JSON keeps plain seconds)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from hyperpod_ha.human_time import ago_at
from hyperpod_ha_cli.execution_events import after

__all__ = ["after", "reason_lines", "seconds", "when"]


def seconds(value: float) -> str:
    """A timeline's offset from the run's start: ``   12.34 s``."""
    return f"{value:7.2f} s"


def when(epoch: Any, now: float | None = None) -> str:
    """``1 d 20 h ago (2026-11-29 23:30 UTC)``; ``-`` when unknown."""
    if not isinstance(epoch, int | float) or isinstance(epoch, bool) or not epoch:
        return "-"
    return ago_at(float(epoch), time.time() if now is None else now)


def reason_lines(reasons: Iterable[Any], indent: str = "  ") -> list[str]:
    return [f"{indent}- {reason}" for reason in reasons]
