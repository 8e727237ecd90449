"""Small pure helpers shared by the measurements: medians, ratios, target checks."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any


class NoSamples(ValueError):
    """A median or ratio was asked of no samples."""


def median(samples: Sequence[float]) -> float:
    if not samples:
        raise NoSamples("no samples to take the median of")
    return float(statistics.median(samples))


def ratio(numerator: float, denominator: float, digits: int = 2) -> float:
    """numerator / denominator, rounded; a zero or negative denominator is a measuring error."""
    if denominator <= 0:
        raise NoSamples(f"baseline is {denominator}: nothing to compare against")
    return round(numerator / denominator, digits)


def median_ratio(samples: Sequence[float], baseline: Sequence[float], digits: int = 2) -> float:
    """The ratio of the medians (not the median of paired ratios: runs are interleaved, not paired)."""
    return ratio(median(samples), median(baseline), digits)


def at_most(value: float, target: float, note: str = "", **details: Any) -> dict[str, Any]:
    """A measured value next to its upper bound: ``{"value", "target", "met", "note", ...}``."""
    check: dict[str, Any] = {"value": value, "target": target, "met": value <= target}
    if note:
        check["note"] = note
    check.update(details)
    return check


def percent(part: float, whole: float) -> float:
    return round(100.0 * part / whole, 1) if whole else 0.0


def human_bytes(size: float) -> str:
    """1536 -> '1.5 KiB' (binary units, as the targets are given)."""
    units = ("B", "KiB", "MiB", "GiB")
    value = float(size)
    for unit in units:
        if abs(value) < 1024 or unit == units[-1]:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")
