from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hyperpod_ha.human_time import utc_text
from hyperpod_ha.verdict import (
    DEFAULT_SLURMCTLD_TIMEOUT,
    MAX_WAIT_SECONDS,
    ConvergenceInputError,
    NextStep,
    next_step,
)

START = "2026-11-29T23:30:30.000Z"
T0 = dt.datetime(2026, 11, 29, 23, 30, 30, tzinfo=dt.UTC)


def step(verdict: str = "DOWN", *, at: float = 0, **given: Any) -> NextStep:
    """next_step at ``at`` seconds after the run's start, with the template's defaults."""
    arguments: dict[str, Any] = {
        "attempt": 1,
        "max_attempts": 30,
        "started_at": START,
        "trigger_at": "",
        "slurmctld_timeout": 10,
        "margin_seconds": 20,
        "deadline_seconds": 1800,
        "backoff_seconds": 5,
        "now": T0 + dt.timedelta(seconds=at),
    }
    arguments.update(given)
    return next_step(verdict, **arguments)


@pytest.mark.parametrize("verdict", ["HEALTHY", "FAILED_OVER"])
def test_verified_verdicts_end_the_run_at_once(verdict: str) -> None:
    assert step(verdict).next == "verified"
    assert step(verdict, attempt=30, at=5000).next == "verified"


@pytest.mark.parametrize("verdict", ["DEGRADED", "SPLIT_BRAIN", "DOWN", "UNKNOWN"])
def test_other_verdicts_are_checked_again_until_timeout_plus_margin(verdict: str) -> None:
    assert step(verdict, at=1).next == "check-again"
    assert step(verdict, at=29).next == "check-again"
    final = step(verdict, at=30)
    assert (final.next, final.wait_seconds) == ("not-verified", 0)
    assert final.converged_by == T0 + dt.timedelta(seconds=30)


def test_waits_grow_from_the_backoff_and_never_pass_the_convergence_time() -> None:
    # SlurmctldTimeout 120 + margin 20: converged by 140 s after the trigger.
    waits = [step(attempt=n, at=1, slurmctld_timeout=120).wait_seconds for n in range(1, 7)]
    assert waits == [5, 10, 20, MAX_WAIT_SECONDS, MAX_WAIT_SECONDS, MAX_WAIT_SECONDS]
    # 3 s before the convergence time: the last check comes exactly then, not 30 s later.
    assert step(attempt=5, at=137, slurmctld_timeout=120).wait_seconds == 3


def test_the_checks_of_a_down_cluster_with_the_defaults() -> None:
    """Replaying the loop: check times until the verdict is final (each check takes 2 s)."""
    for timeout, horizon in ((10, 30), (120, 140), (None, DEFAULT_SLURMCTLD_TIMEOUT + 20)):
        at, attempt, checks = 0.0, 1, []
        while True:
            at += 2
            checks.append(at)
            decided = step(attempt=attempt, at=at, slurmctld_timeout=timeout)
            if decided.next != "check-again":
                break
            at += decided.wait_seconds
            attempt += 1
        assert checks[-1] >= horizon
        assert checks[-1] <= horizon + 3  # the final check is at the horizon, not a wait later
        assert len(checks) <= 10


def test_the_trigger_time_counts_not_the_run_start() -> None:
    # Published 25 s before the run began: converged by 5 s into the run.
    early = (T0 - dt.timedelta(seconds=25)).isoformat()
    assert step(at=4, trigger_at=early).next == "check-again"
    assert step(at=4, trigger_at=early).wait_seconds == 1
    assert step(at=5, trigger_at=early).next == "not-verified"
    # A late redelivery (an hour old): the first verdict is final.
    assert step(at=1, trigger_at="2026-11-29T22:30:30Z").next == "not-verified"


def test_a_trigger_stamped_after_the_run_start_counts_from_the_start() -> None:
    skewed = (T0 + dt.timedelta(seconds=300)).isoformat()
    assert step(at=30, trigger_at=skewed).next == "not-verified"


def test_an_unknown_timeout_is_slurms_default() -> None:
    assert step(at=130, slurmctld_timeout=None).next == "check-again"
    assert step(at=140, slurmctld_timeout=None).next == "not-verified"
    assert step(at=140, slurmctld_timeout=None).slurmctld_timeout == DEFAULT_SLURMCTLD_TIMEOUT


def test_attempts_and_the_deadline_still_cap_the_run() -> None:
    assert step(attempt=2, max_attempts=2, at=1).next == "not-verified"
    # 58 s into a 60 s run, a 5 s wait would pass the deadline.
    assert step(at=58, slurmctld_timeout=600, deadline_seconds=60).next == "not-verified"


def test_a_start_time_without_zone_is_utc() -> None:
    assert step(at=29, started_at="2026-11-29T23:30:30").next == "check-again"


@pytest.mark.parametrize(
    "given",
    [
        {"attempt": 0},
        {"max_attempts": 0},
        {"started_at": "yesterday"},
        {"trigger_at": "soon"},
        {"slurmctld_timeout": 0},
        {"margin_seconds": -1},
        {"backoff_seconds": -1},
    ],
)
def test_bad_input_is_a_typed_error(given: dict[str, Any]) -> None:
    with pytest.raises(ConvergenceInputError):
        step(**given)


def test_trigger_times_are_normalised_or_left_to_the_run_start() -> None:
    assert utc_text("2026-11-29T23:30:30.123Z") == "2026-11-29T23:30:30.123Z"
    assert utc_text("2026-11-30T00:30:30+01:00") == "2026-11-29T23:30:30.000Z"
    assert utc_text("") == ""
    assert utc_text("not a time") == ""
    assert utc_text(None) == ""


@given(
    at=st.floats(min_value=0, max_value=4000),
    attempt=st.integers(min_value=1, max_value=100),
    timeout=st.one_of(st.none(), st.integers(min_value=1, max_value=3600)),
    margin=st.integers(min_value=0, max_value=600),
    backoff=st.integers(min_value=0, max_value=600),
)
def test_a_check_again_never_waits_past_the_convergence_time_or_the_deadline(
    at: float, attempt: int, timeout: int | None, margin: int, backoff: int
) -> None:
    decided = step(
        attempt=attempt,
        max_attempts=100,
        at=at,
        slurmctld_timeout=timeout,
        margin_seconds=margin,
        backoff_seconds=backoff,
    )
    now = T0 + dt.timedelta(seconds=at)
    assert decided.converged_by is not None
    if decided.next == "check-again":
        assert now < decided.converged_by
        assert 0 <= decided.wait_seconds <= max(backoff, MAX_WAIT_SECONDS)
        assert now + dt.timedelta(seconds=decided.wait_seconds - 1) < decided.converged_by
        assert at + decided.wait_seconds < 1800
    else:
        assert decided.next == "not-verified"
        assert attempt >= 100 or now >= decided.converged_by or at + max(backoff, MAX_WAIT_SECONDS) >= 1800
