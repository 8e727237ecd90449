"""A run during HyperPod's maintenance: it waits (bounded) whatever the verdict, then checks
again with a convergence window from the end of the update; past the bound the verdict is final
and says that the maintenance did not end in time."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from hyperpod_ha.controllers.maintenance import of
from hyperpod_ha.verdict import ConvergenceInputError, VerdictPolicy, VerdictRequest, decide
from hyperpod_ha.verdict.maintenance import MaintenanceWait, plan
from hyperpod_ha.verdict.reasons import Reason, ReasonCode

T0 = dt.datetime(2026, 12, 3, 22, 10, 0, tzinfo=dt.UTC)
START = "2026-12-03T22:10:00Z"
UPDATING = of("SystemUpdating", [("i-1", "SystemUpdating")]).to_json()
ENDED = of("InService", [("i-1", "Running")]).to_json()


def wait(seen: dict[str, Any], since: str = "", ended_at: str = "", **more: Any) -> MaintenanceWait:
    event = {
        "maintenance": seen,
        "maintenance_wait": {"since": since, "ended_at": ended_at},
        "maintenance_wait_minutes": 90,
        "maintenance_poll_seconds": 300,
        "lease_seconds": 3600,
        **more,
    }
    found = MaintenanceWait.from_event(event)
    assert found is not None
    return found


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def test_the_first_sight_of_maintenance_waits_one_poll_and_keeps_the_lease_past_it() -> None:
    step = plan(wait(UPDATING), T0)
    assert step.waiting
    assert not step.expired
    assert step.wait_seconds == 300
    assert step.since == T0
    assert step.lease_until == int(T0.timestamp()) + 300 + 3600
    (note,) = step.notes()
    assert note == Reason(
        ReasonCode.MAINTENANCE_IN_PROGRESS,
        "maintenance in progress: cluster SystemUpdating; controller i-1 SystemUpdating "
        "(incident deferred until it ends)",
    )
    assert step.to_json()["since"] == "2026-12-03T22:10:00Z"
    assert step.to_json()["lease_until"] == str(step.lease_until)


def test_the_wait_never_passes_its_bound_counted_from_the_first_sight() -> None:
    step = plan(wait(UPDATING, since=START), at(90 * 60 - 100))
    assert (step.waiting, step.wait_seconds, step.waited_seconds) == (True, 100, 5300)


def test_past_the_bound_the_wait_has_expired_and_says_so() -> None:
    step = plan(wait(UPDATING, since=START), at(90 * 60))
    assert not step.waiting
    assert step.expired
    (note,) = step.notes()
    assert note.code is ReasonCode.MAINTENANCE_OVERDUE
    assert note.text.startswith("maintenance did not end within 1 h 30 min (maintenance in progress: cluster")
    assert "seen since 2026-12-03 22:10:00 UTC" in note.text
    assert note.text.endswith("the incident is no longer deferred")


def test_the_end_of_the_update_is_when_the_run_first_sees_it_ended() -> None:
    step = plan(wait(ENDED, since=START), at(1200))
    assert not step.waiting
    assert not step.expired
    assert step.ended_at == at(1200)
    # Seen ended before: that time stays.
    again = plan(wait(ENDED, since=START, ended_at="2026-12-03T22:30:00Z"), at(1300))
    assert again.ended_at == at(1200)
    (note,) = again.notes()
    assert note == Reason(
        ReasonCode.MAINTENANCE_ENDED,
        "maintenance seen from 2026-12-03 22:10:00 UTC until 2026-12-03 22:30:00 UTC; "
        "this verdict comes from the checks after it",
    )


def test_a_second_update_waits_again_within_the_same_bound() -> None:
    step = plan(wait(UPDATING, since=START, ended_at="2026-12-03T22:30:00Z"), at(1300))
    assert step.waiting
    assert step.ended_at is None
    assert step.since == T0


def test_no_maintenance_ever_adds_nothing() -> None:
    step = plan(wait(ENDED), T0)
    assert (step.waiting, step.expired, step.since, step.ended_at, step.notes()) == (
        False,
        False,
        None,
        None,
        [],
    )


def test_a_wait_of_zero_minutes_only_notes_the_maintenance() -> None:
    step = plan(wait(UPDATING, maintenance_wait_minutes=0), T0)
    assert not step.waiting
    assert not step.expired
    (note,) = step.notes()
    assert note.code is ReasonCode.MAINTENANCE_IN_PROGRESS
    assert note.text.endswith("(MaintenanceWaitMinutes is 0)")


@pytest.mark.parametrize(
    ("more", "reason"),
    [
        ({"maintenance_wait_minutes": 1441}, "maintenance_wait_minutes is outside 0-1440"),
        ({"maintenance_wait_minutes": -1}, "maintenance_wait_minutes is outside"),
        ({"maintenance_wait_minutes": float("nan")}, "maintenance_wait_minutes is outside"),
        ({"maintenance_poll_seconds": 5}, "maintenance_poll_seconds is outside 10-3600"),
        ({"maintenance_poll_seconds": "often"}, "bad maintenance input"),
        ({"lease_seconds": 10**9}, "lease_seconds is outside"),
        ({"maintenance_wait": "since yesterday"}, "maintenance_wait is not a JSON object"),
        ({"maintenance_wait": {"since": 3}}, "must be strings"),
    ],
)
def test_bad_maintenance_input_is_refused_with_its_reason(more: dict[str, Any], reason: str) -> None:
    with pytest.raises(ConvergenceInputError, match=reason):
        wait(UPDATING, **more)


def test_a_since_that_is_not_a_time_is_refused() -> None:
    with pytest.raises(ConvergenceInputError, match=r"maintenance_wait\.since"):
        plan(wait(UPDATING, since="yesterday"), T0)


def run_step(seen: dict[str, Any], now: dt.datetime, **more: Any) -> dict[str, Any]:
    """One "Decide the verdict" of the workflow, no controller checked (UNKNOWN)."""
    event = {
        "reports": [],
        "attempt": 1,
        "max_attempts": 30,
        "started_at": START,
        "trigger": {"time": START},
        "margin_seconds": 20,
        "deadline_seconds": 1800,
        "backoff_seconds": 5,
        "maintenance": seen,
        "maintenance_wait": {"since": "", "ended_at": ""},
        "maintenance_wait_minutes": 90,
        "maintenance_poll_seconds": 300,
        "lease_seconds": 3600,
        **more,
    }
    return decide(VerdictRequest.from_event(event), VerdictPolicy(), now=now)


def test_a_run_under_maintenance_waits_and_says_so_first() -> None:
    result = run_step(UPDATING, T0)
    assert (result["verdict"], result["next"], result["wait_seconds"]) == (
        "UNKNOWN",
        "wait-for-maintenance",
        300,
    )
    assert result["reason_codes"][0] == "maintenance-in-progress"
    assert len(result["reason_codes"]) == len(result["reasons"])
    assert result["reasons"][0].startswith("maintenance in progress: cluster SystemUpdating")
    assert result["maintenance"]["in_progress"] is True
    assert result["converged_by"] is None


def test_after_the_update_the_checks_get_a_convergence_window_from_its_end() -> None:
    # An hour after the run began: without maintenance this check would be final at once.
    result = run_step(ENDED, at(3600), maintenance_wait={"since": START, "ended_at": ""})
    assert result["next"] == "check-again"
    assert result["maintenance"]["ended_at"] == "2026-12-03T23:10:00Z"
    assert result["converged_by"] == "2026-12-03T23:12:20Z"  # the end + 120 s (default) + 20 s


def test_past_the_bound_a_failing_verdict_is_final() -> None:
    result = run_step(UPDATING, at(5400), maintenance_wait={"since": START, "ended_at": ""})
    assert (result["next"], result["wait_seconds"]) == ("not-verified", 0)
    assert result["reason_codes"][0] == "maintenance-overdue"
    assert result["reasons"][0].startswith("maintenance did not end within 1 h 30 min")
    assert result["maintenance"]["expired"] is True


def test_without_maintenance_input_the_step_is_as_before() -> None:
    result = run_step(ENDED, T0)
    plain = decide(
        VerdictRequest.from_event(
            {
                "reports": [],
                "attempt": 1,
                "max_attempts": 30,
                "started_at": START,
                "trigger": {"time": START},
                "margin_seconds": 20,
                "backoff_seconds": 5,
            }
        ),
        VerdictPolicy(),
        now=T0,
    )
    assert "maintenance" not in plain
    assert {k: v for k, v in result.items() if k != "maintenance"} == plain
