"""A verification run's early warnings (rules.one_check_warnings): the watchdog's rules on one
check's probe output, the serving controller's sdiag as captured, without a sample before it."""

from __future__ import annotations

from hyperpod_ha.controllers.check import check_controller
from hyperpod_ha.controllers.models import ControllerReport
from hyperpod_ha.early_warning.models import KIND_OVERLOADED
from hyperpod_ha.early_warning.rules import one_check_warnings
from hyperpod_ha.early_warning.settings import WarningThresholds
from hyperpod_ha.slurm import ProbeSection
from hyperpod_ha.verdict import VerdictPolicy, evaluate
from tests.fakes.canned_runner import CannedRunner
from tests.unit.controllers.cases.probe_outputs import NODE, OWN_DOCUMENT, capture, probe_text, result
from tests.unit.slurm.cases.sdiag import SDIAG

# `sdiag -t` on the lab's active ctl1 (24.11), whole: one server thread, every queue empty.
QUIET = capture("sdiag_24_11.txt")


def _section(sdiag: str, millis: int = 40) -> ProbeSection:
    return ProbeSection(
        name="sdiag", text=sdiag, exit_code=0, millis=millis, timed_out=False, truncated=False
    )


def _report(sdiag: str, millis: int = 40, **changes: ProbeSection) -> ControllerReport:
    runner = CannedRunner(result=result(probe_text(sdiag=_section(sdiag, millis), **changes)))
    return check_controller(NODE, runner, document=OWN_DOCUMENT, deadline_seconds=60)


def _warnings(report: ControllerReport, thresholds: WarningThresholds | None = None) -> list[tuple[str, ...]]:
    verdict = evaluate([report], VerdictPolicy())
    assert verdict.active_controller is not None, verdict.texts
    found = one_check_warnings(verdict, [report], thresholds or WarningThresholds())
    return [(warning.kind, warning.controller, *warning.codes) for warning in found]


def test_the_quiet_lab_as_captured_gives_no_warning() -> None:
    report = _report(QUIET)
    assert report.load.server_threads == 1
    assert _warnings(report) == []


def test_a_slow_sdiag_round_trip_warns_that_the_serving_controller_is_overloaded() -> None:
    report = _report(QUIET, millis=6200)
    verdict = evaluate([report], VerdictPolicy())
    (warning,) = one_check_warnings(verdict, [report], WarningThresholds())
    assert (warning.kind, warning.controller, warning.codes) == (
        KIND_OVERLOADED,
        verdict.active_controller,
        ("overloaded-round-trip",),
    )
    assert "sdiag answered in 6200 ms (5000 ms)" in warning.headline
    assert warning.figures.round_trip_ms == 6200


def test_server_threads_past_their_threshold_warn_and_one_check_has_no_rpc_window() -> None:
    # 37 server threads; REQUEST_JOB_INFO averages 900 ms since sdiag's reset.
    report = _report(SDIAG)
    assert _warnings(report) == []
    lowered = WarningThresholds(server_threads=32, rpc_average_ms=1)
    # The average since the reset says little about now: only the watchdog, over a window, weighs it.
    assert _warnings(report, lowered) == [(KIND_OVERLOADED, "ctl1", "overloaded-server-threads")]


def test_accounting_at_risk_needs_the_queues_rate_which_one_check_has_not() -> None:
    # slurmdbd away and 5,120 records queued: whether it grows takes the watchdog's two checks.
    dbd_away = ProbeSection(
        name="dbd_clusters",
        text="sacctmgr: error: Problem talking to the database: Connection refused",
        exit_code=1,
        millis=20,
        timed_out=False,
        truncated=False,
    )
    report = _report(SDIAG, dbd_clusters=dbd_away)
    assert (report.dbd.reachable, report.load.dbd_agent_queue) == (False, 5120)
    assert _warnings(report) == []
