"""Each controller's figures (early_warning.figures) and the warnings they give (rules)."""

from __future__ import annotations

import dataclasses

import pytest

from hyperpod_ha.early_warning.figures import controller_figures
from hyperpod_ha.early_warning.models import (
    KIND_ACCOUNTING_AT_RISK,
    KIND_OVERLOADED,
    ControllerFigures,
    Sample,
)
from hyperpod_ha.early_warning.rules import WARNINGS, WarningCode, early_warnings, time_to_loss
from hyperpod_ha.early_warning.settings import WarningThresholds
from hyperpod_ha.errors import ConfigurationError
from hyperpod_ha.topic_messages.kinds import KINDS as MESSAGE_KINDS
from hyperpod_ha.verdict.reasons import ReasonCode
from tests.unit.early_warning.cases.loaded import VERDICT, load, reports

THRESHOLDS = WarningThresholds()


def _figures(
    now: int, before: int | None = None, **changes: object
) -> tuple[tuple[ControllerFigures, ...], Sample | None]:
    previous = None
    if before is not None:
        _, previous = controller_figures(VERDICT, reports(load(before)), None)
    dbd_answers = bool(changes.pop("dbd_answers", True))
    return controller_figures(VERDICT, reports(load(now, **changes), dbd_answers=dbd_answers), previous)  # type: ignore[arg-type]


def test_every_warning_code_has_one_row_of_its_kind_and_is_no_reasons_code() -> None:
    assert list(WARNINGS) == list(WarningCode)
    assert all(row.code is code for code, row in WARNINGS.items())
    assert {row.kind for row in WARNINGS.values()} == {KIND_OVERLOADED, KIND_ACCOUNTING_AT_RISK}
    for row in WARNINGS.values():
        assert row.code.value.startswith(("overloaded-", "accounting-")), row
        # The severity is the kind's incident's: one severity per warning, wherever it is read.
        assert row.severity == int(MESSAGE_KINDS[row.kind].severity), row
        assert row.meaning
    # A filter that matches a code knows which table it is from.
    assert not {code.value for code in WarningCode} & {code.value for code in ReasonCode}


def test_the_active_controller_has_sdiags_figures_the_standby_its_nodes() -> None:
    (active, standby), sample = _figures(2000, threads=9)
    assert (active.controller, active.role, active.server_threads) == ("ctl1", "active", 9)
    assert (active.round_trip_ms, active.heartbeat_lag_seconds, active.state_save_write_ms) == (30, 4, 3)
    assert active.main_cycle_last_ms == 1.5
    assert (standby.controller, standby.role, standby.server_threads) == ("ctl2", "standby", None)
    assert standby.slurmctld_threads == 17
    assert sample is not None
    assert (sample.controller, sample.at, sample.types) == ("ctl1", 2000, {"REQUEST_JOB_INFO": (100, 50_000)})
    assert Sample.from_json(sample.to_json()) == sample


def test_rpc_averages_are_over_the_window_between_two_checks() -> None:
    # 100 calls of 0.5 ms before; 400 more calls taking 800 s in all: 2 s on average in the window.
    (active, _), _ = _figures(
        2300, 2000, types=(("REQUEST_JOB_INFO", 500, 800_050_000),), users=(("alice", 500, 800_050_000),)
    )
    assert active.rpc_window_seconds == 300
    assert active.rpc_average_ms == 2000.0
    assert [row.phrase() for row in active.slowest_types] == [
        "REQUEST_JOB_INFO (400 calls, 2000 ms on average)"
    ]
    assert [row.name for row in active.busiest_users] == ["alice"]


def test_counters_reset_between_checks_are_not_compared() -> None:
    (active, _), _ = _figures(2300, 2000, since=2100, types=(("REQUEST_JOB_INFO", 10, 5000),))
    assert active.rpc_window_seconds is None  # since the reset
    assert active.rpc_average_ms == 0.5


def test_the_queue_rate_and_the_time_to_loss() -> None:
    (active, _), _ = _figures(2100, 2000, queue=500, limit=10_000)
    assert active.dbd_queue_rate == 5.0
    assert time_to_loss(active) == (10_000 - 1 - 500) / 5.0
    assert time_to_loss(dataclasses.replace(active, dbd_queue_rate=-1.0)) is None


def test_a_healthy_controller_gives_no_warning() -> None:
    figures, _ = _figures(2300, 2000, queue=0)
    assert early_warnings(figures, THRESHOLDS) == ()


@pytest.mark.parametrize(
    ("changes", "codes"),
    [
        ({"threads": 64}, ["overloaded-server-threads"]),
        ({"threads": 63}, []),
        ({"sdiag_ms": 5000}, ["overloaded-round-trip"]),
        (
            {"threads": 200, "types": (("REQUEST_JOB_INFO", 1100, 1_000_050_000),)},
            ["overloaded-server-threads", "overloaded-rpc-average"],
        ),
    ],
)
def test_each_threshold_passed_has_its_code(changes: dict[str, object], codes: list[str]) -> None:
    figures, _ = _figures(2300, 2000, **changes)
    found = early_warnings(figures, THRESHOLDS)
    assert [code for warning in found for code in warning.codes] == codes
    if codes:
        (warning,) = found
        assert (warning.kind, warning.controller) == (KIND_OVERLOADED, "ctl1")
        assert warning.headline.startswith("ctl1 is overloaded: ")
        assert warning.to_json()["figures"]["role"] == "active"


@pytest.mark.parametrize(
    ("queue", "limit", "dbd_answers", "codes"),
    [
        # 5 records a second from 500: 10,000 reached in about 32 min, within the 60 min horizon.
        (500, 10_000, False, ["accounting-queue-growing"]),
        (500, 100_000, False, []),  # about 5.5 h away
        (5_500, 10_000, False, ["accounting-queue-growing", "accounting-queue-half-full"]),
        (500, 10_000, True, []),  # slurmdbd answers: the queue drains
    ],
)
def test_accounting_at_risk(queue: int, limit: int, dbd_answers: bool, codes: list[str]) -> None:
    start = queue - 500
    _, before = controller_figures(VERDICT, reports(load(2000, queue=start, limit=limit)), None)
    figures, _ = controller_figures(
        VERDICT, reports(load(2100, queue=queue, limit=limit), dbd_answers=dbd_answers), before
    )
    found = early_warnings(figures, THRESHOLDS)
    assert [code for warning in found for code in warning.codes] == codes
    if codes:
        (warning,) = found
        assert warning.kind == KIND_ACCOUNTING_AT_RISK
        assert "do not fail over now" in warning.reasons[1]


def test_no_rate_without_a_previous_check_so_no_accounting_warning() -> None:
    figures, _ = controller_figures(VERDICT, reports(load(2000, queue=9_000), dbd_answers=False), None)
    assert early_warnings(figures, THRESHOLDS) == ()


@pytest.mark.parametrize(
    ("variable", "value"),
    [("OVERLOAD_SERVER_THREADS", "1"), ("OVERLOAD_SERVER_THREADS", "257"), ("OVERLOAD_WINDOW_MINUTES", "x")],
)
def test_thresholds_out_of_bounds_are_refused(variable: str, value: str) -> None:
    with pytest.raises(ConfigurationError, match=variable):
        WarningThresholds.from_environment({variable: value})


def test_thresholds_read_from_the_environment() -> None:
    read = WarningThresholds.from_environment(
        {"OVERLOAD_WINDOW_MINUTES": "0", "OVERLOAD_SERVER_THREADS": "8"}
    )
    assert (read.window_seconds, read.server_threads, read.horizon_seconds) == (0, 8, 3600)
