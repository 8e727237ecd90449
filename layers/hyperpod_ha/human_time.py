"""Times as a person reads them: ``12 s``, ``3 min 5 s``, ``2 h 7 min``, ``1 d 20 h``.

Two units at most, the larger first (a reader wants the size, not the last second); JSON
and the state table keep plain seconds, or a moment as ISO 8601 UTC text (:func:`iso_utc`,
:func:`utc_text`). Used where an operator reads a reason, an incident
or a command's output.
"""

from __future__ import annotations

import datetime as dt
import math

_UNITS = (("d", 86_400), ("h", 3_600), ("min", 60), ("s", 1))


def duration(seconds: float) -> str:
    """``45 s``, ``3 min 5 s``, ``1 h``, ``1 d 20 h``; a fraction under a minute keeps its
    tenths (``25.3 s``), as a measured duration has them."""
    if not math.isfinite(seconds):
        return "unknown"
    sign, value = ("-", -seconds) if seconds < 0 else ("", seconds)
    if value != int(value) and round(value, 1) < 60:
        return f"{sign}{round(value, 1):g} s"
    whole = round(value)
    for index, (unit, size) in enumerate(_UNITS[:-1]):
        if whole >= size:
            first, rest = divmod(whole, size)
            next_unit, next_size = _UNITS[index + 1]
            second = f" {rest // next_size} {next_unit}" if rest // next_size else ""
            return f"{sign}{first} {unit}{second}"
    return f"{sign}{whole} s"


def ago(seconds: float) -> str:
    """``12 s ago``; a negative age (a clock ahead of the reader's) reads ``in 3 s``."""
    return f"in {duration(-seconds)}" if seconds < 0 else f"{duration(seconds)} ago"


def utc_minute(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def ago_at(epoch: float, now: float) -> str:
    """``1 d 20 h ago (2026-11-29 23:30 UTC)``: the age to the second, then the moment, to the minute."""
    return f"{ago(round(now - epoch))} ({utc_minute(epoch)})"


def parse_utc(text: object) -> float | None:
    """Epoch seconds of an ISO 8601 time (``2026-12-01T10:03:00Z``, CloudWatch's
    ``2026-12-01T10:03:00.985+0000``) or of a datetime (what boto3 returns); ``None`` for anything
    else. A time without a zone is UTC."""
    if isinstance(text, dt.datetime):
        moment = text
    elif not isinstance(text, str) or not 10 <= len(text) <= 64:
        return None
    else:
        try:
            moment = dt.datetime.fromisoformat(text.strip())
        except ValueError:
            return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.timestamp()


def iso_utc(epoch: float | None) -> str:
    """``2026-12-01T10:03:00.000Z`` (what :func:`parse_utc` reads back); ``""`` for ``None``."""
    if epoch is None:
        return ""
    return dt.datetime.fromtimestamp(epoch, dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def utc_text(value: object) -> str:
    """``value`` (an ISO 8601 time or a datetime) as :func:`iso_utc` writes it, or ``""`` when it
    is missing or unreadable: a trigger's time as a run's input carries it."""
    return iso_utc(parse_utc(value))
