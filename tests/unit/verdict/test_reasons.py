"""A verdict's reasons by code: the table (every code one row, documented), and the rule that
picks a DEGRADED verdict's headline (its most severe problem, not its first)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hyperpod_ha.early_warning.rules import WarningCode
from hyperpod_ha.incidents import messages as incident_messages
from hyperpod_ha.verdict import DEGRADED, VERIFIED
from hyperpod_ha.verdict.reasons import REASONS, Reason, ReasonCode, most_severe
from hyperpod_ha_stack import reasons_page
from hyperpod_ha_stack.generate import stale
from tests.unit.verdict.cases.verdict_cases_degraded import DEGRADED_CASES
from tests.unit.verdict.cases.verdict_cases_drift import DRIFT_CASES
from tests.unit.verdict.cases.verdict_cases_redundancy import REDUNDANCY_CASES, RedundancyCase
from tests.unit.verdict.cases.verdict_cases_takeover import TAKEOVER_CASES
from tests.unit.verdict.cases.verdict_probes import STANDBY, Case, Probe, verdict_of

ROOT = Path(__file__).resolve().parents[3]
ALL_CASES: list[Case | RedundancyCase] = [*TAKEOVER_CASES, *DEGRADED_CASES, *DRIFT_CASES, *REDUNDANCY_CASES]


def test_every_code_has_one_row_with_a_severity_on_opscenters_scale() -> None:
    assert list(REASONS) == list(ReasonCode)
    assert all(row.code is code for code, row in REASONS.items())
    for row in REASONS.values():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", row.code.value), row.code
        assert row.severity in (None, 1, 2, 3, 4), row
        assert row.meaning


def test_docs_list_every_code() -> None:
    page = (ROOT / "docs" / "reasons.md").read_text()
    assert page == reasons_page.page()
    assert ROOT / "docs" / "reasons.md" not in stale(ROOT), "run `make generate`"
    for code in ReasonCode:
        assert f"| `{code.value}` |" in page
    warnings = page.split("## An early warning's codes")[1]
    for warning in WarningCode:
        assert f"| `{warning.value}` |" in warnings


def test_the_most_severe_reason_wins_and_the_first_on_a_tie() -> None:
    context = Reason(ReasonCode.ACTIVE_CONTROLLER, "ctl1 is active")
    dbd = Reason(ReasonCode.SLURMDBD_NOT_ANSWERING, "slurmdbd does not answer")
    state = Reason(ReasonCode.STATE_SAVE_NOT_WRITABLE, "ctl1: StateSaveLocation is not writable")
    beat = Reason(ReasonCode.HEARTBEAT_UNREADABLE, "ctl2: heartbeat unreadable")
    assert most_severe([context, dbd, state, beat]) == state
    assert most_severe([context, dbd]) == dbd
    assert most_severe([context]) is None
    assert most_severe([]) is None


def test_a_degraded_headline_is_its_most_severe_problem_not_its_first() -> None:
    # slurmdbd's rule runs before StateSaveLocation's: by position the headline was slurmdbd.
    verdict = verdict_of(Probe(writable=False, dbd="sacctmgr_cluster_refused.txt", dbd_rc=1), STANDBY)
    assert verdict.name is DEGRADED
    assert verdict.codes.index("slurmdbd-not-answering") < verdict.codes.index("state-save-not-writable")
    assert verdict.problem is not None
    assert verdict.problem.startswith("ctl1: StateSaveLocation ")


@pytest.mark.parametrize("case", ALL_CASES, ids=[case.id for case in ALL_CASES])
def test_problems_and_only_problems_have_a_severity(case: Case | RedundancyCase) -> None:
    verdict = verdict_of(*case.controllers, policy=case.policy if isinstance(case, Case) else None)
    problems = [r for r in verdict.reasons if r.severity is not None]
    if verdict.name in VERIFIED:
        # A verified verdict explains; the one problem it may tell is that nothing is left.
        assert {r.code for r in problems} <= {ReasonCode.NO_READY_STANDBY}, problems
    else:
        assert problems, verdict.reasons
    if verdict.name is DEGRADED:
        headline = most_severe(verdict.reasons)
        assert headline is not None
        assert verdict.problem == headline.text
    else:
        assert verdict.problem is None
    assert verdict.to_json()["reason_codes"] == [r.code.value for r in verdict.reasons]


def test_the_incidents_code_for_no_ready_standby_is_the_verdicts() -> None:
    # incidents imports no feature: it names the code itself.
    assert ReasonCode.NO_READY_STANDBY.value == incident_messages.NO_READY_STANDBY
