from __future__ import annotations

import datetime as dt

import pytest

from hyperpod_ha.convergence import ConvergenceInputError, next_step

START = "2026-11-29T23:30:30.000Z"
NOW = dt.datetime(2026, 11, 29, 23, 31, 0, tzinfo=dt.UTC)  # 30 s after the start


@pytest.mark.parametrize("verdict", ["HEALTHY", "FAILED_OVER"])
def test_verified_verdicts_end_the_run_at_once(verdict: str) -> None:
    assert next_step(verdict, 1, 4, START, 900, 30, NOW) == "verified"
    assert next_step(verdict, 4, 4, START, 900, 30, NOW) == "verified"


@pytest.mark.parametrize("verdict", ["DEGRADED", "SPLIT_BRAIN", "DOWN", "UNKNOWN"])
def test_other_verdicts_are_checked_again_while_attempts_remain(verdict: str) -> None:
    assert next_step(verdict, 1, 4, START, 900, 30, NOW) == "check-again"
    assert next_step(verdict, 3, 4, START, 900, 30, NOW) == "check-again"
    assert next_step(verdict, 4, 4, START, 900, 30, NOW) == "not-verified"


def test_the_deadline_stops_the_checks_before_the_attempts_do() -> None:
    # 30 s in, a 60 s deadline, 30 s backoff: the next check would start at the deadline.
    assert next_step("DOWN", 1, 10, START, 60, 30, NOW) == "not-verified"
    assert next_step("DOWN", 1, 10, START, 61, 30, NOW) == "check-again"


def test_a_start_time_without_zone_is_utc() -> None:
    assert next_step("DOWN", 1, 4, "2026-11-29T23:30:30", 45, 10, NOW) == "check-again"


@pytest.mark.parametrize(
    ("attempt", "max_attempts", "started_at"),
    [(0, 4, START), (1, 0, START), (1, 4, "yesterday")],
)
def test_bad_counters_are_a_typed_error(attempt: int, max_attempts: int, started_at: str) -> None:
    with pytest.raises(ConvergenceInputError):
        next_step("DOWN", attempt, max_attempts, started_at, 900, 30, NOW)
