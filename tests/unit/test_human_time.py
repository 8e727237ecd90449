"""Ages and durations as a person reads them, at every unit boundary; JSON keeps the seconds."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hyperpod_ha import human_time
from hyperpod_ha.human_time import ago, ago_at, duration


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0 s"),
        (1, "1 s"),
        (12, "12 s"),
        (59, "59 s"),
        (60, "1 min"),
        (61, "1 min 1 s"),
        (185, "3 min 5 s"),
        (3599, "59 min 59 s"),
        (3600, "1 h"),
        (3660, "1 h 1 min"),
        (3661, "1 h 1 min"),  # two units at most
        (86399, "23 h 59 min"),
        (86400, "1 d"),
        (158323, "1 d 19 h"),
        (2592000, "30 d"),
        (2.5, "2.5 s"),
        (25.34, "25.3 s"),
        (46.44, "46.4 s"),
        (59.96, "1 min"),
        (61.7, "1 min 2 s"),
    ],
)
def test_duration(seconds: float, text: str) -> None:
    assert duration(seconds) == text


def test_ago_and_a_clock_ahead() -> None:
    assert ago(12) == "12 s ago"
    assert ago(185) == "3 min 5 s ago"
    assert ago(-3) == "in 3 s"


def test_ago_at_gives_the_moment_to_the_minute() -> None:
    then = dt.datetime(2026, 11, 29, 23, 30, 12, tzinfo=dt.UTC).timestamp()
    now = then + 1 * 86400 + 20 * 3600 + 59
    assert ago_at(then, now) == "1 d 20 h ago (2026-11-29 23:30 UTC)"


@given(st.integers(min_value=0, max_value=10**9))
def test_two_units_at_most_and_never_more_than_the_age(seconds: int) -> None:
    words = duration(seconds).split()
    assert len(words) in (2, 4)
    sizes = {"d": 86400, "h": 3600, "min": 60, "s": 1}
    shown = sum(int(words[i]) * sizes[words[i + 1]] for i in range(0, len(words), 2))
    assert seconds - sizes[words[-1]] < shown <= seconds


@pytest.mark.parametrize(
    ("text", "epoch"),
    [
        ("2026-12-01T10:00:00Z", 1_796_119_200.0),
        ("2026-12-01T10:00:00.500Z", 1_796_119_200.5),
        ("2026-12-01T10:00:00.985+0000", 1_796_119_200.985),
        ("2026-12-01T12:00:00+02:00", 1_796_119_200.0),
        ("2026-12-01T10:00:00", 1_796_119_200.0),
        (dt.datetime(2026, 12, 1, 10, tzinfo=dt.UTC), 1_796_119_200.0),
        ("", None),
        ("yesterday", None),
        ("2026-13-01T10:00:00Z", None),
        ("9" * 100, None),
        (1_796_119_200, None),
        (None, None),
    ],
)
def test_parse_utc(text: object, epoch: float | None) -> None:
    assert human_time.parse_utc(text) == epoch


def test_iso_utc_is_read_back() -> None:
    assert human_time.iso_utc(1_796_119_200.25) == "2026-12-01T10:00:00.250Z"
    assert human_time.parse_utc(human_time.iso_utc(1_796_119_200.25)) == 1_796_119_200.25
    assert human_time.iso_utc(None) == ""
