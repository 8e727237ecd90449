"""Redundancy in every verdict: the ready standbys, the level, and why the others are not ready,
one rule for two and three controllers (cases in ``cases/verdict_cases_redundancy.py``)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hyperpod_ha.verdict import VERIFIED
from hyperpod_ha.verdict.reasons import ReasonCode
from hyperpod_ha.verdict.redundancy import LEVELS, NO_STANDBY
from tests.unit.verdict.cases.verdict_cases_redundancy import (
    REDUNDANCY_CASES,
    RedundancyCase,
    three,
)
from tests.unit.verdict.cases.verdict_probes import Probe, Unreachable, verdict_of


@pytest.mark.parametrize("case", REDUNDANCY_CASES, ids=[c.id for c in REDUNDANCY_CASES])
def test_redundancy(case: RedundancyCase) -> None:
    verdict = verdict_of(*case.controllers)
    assert verdict.name is case.verdict, verdict.reasons
    assert (verdict.redundancy, verdict.standbys) == (case.redundancy, case.standbys), verdict.not_ready
    assert set(verdict.not_ready) == set(case.not_ready), verdict.not_ready
    for name, words in case.not_ready.items():
        assert words in verdict.not_ready[name]
    said = [r for r in verdict.reasons if r.code is ReasonCode.NO_READY_STANDBY]
    assert bool(said) is (case.redundancy == "none"), verdict.reasons
    if said and verdict.name in VERIFIED:
        # Right after who is active, naming it.
        assert verdict.reasons[1] == said[0]
        assert said[0].text.startswith(NO_STANDBY)
        assert f"({verdict.active_controller} is active" in said[0].text
    out = json.loads(json.dumps(verdict.to_json()))
    assert out["redundancy"] == case.redundancy
    assert out["standbys"] == list(case.standbys)
    assert set(out["not_ready"]) == set(case.not_ready)


def test_every_level_is_covered() -> None:
    assert {case.redundancy for case in REDUNDANCY_CASES} == set(LEVELS)


def test_a_dead_standby_says_no_more_than_a_dead_old_primary() -> None:
    """The one rule: on two controllers, whichever controller is down beside the active one,
    the verdict is verified and redundancy is none."""
    dead_standby = next(c for c in REDUNDANCY_CASES if c.id.startswith("2: standby killed"))
    dead_primary = next(c for c in REDUNDANCY_CASES if c.id.startswith("2: primary killed"))
    for case in (dead_standby, dead_primary):
        verdict = verdict_of(*case.controllers)
        assert verdict.verified
        assert verdict.redundancy == "none"


# One standby's state, as the probe would see it: (slurmctld state, its log, reachable by SSM).
_STATES: dict[str, dict[str, object] | None] = {
    "standby": {},
    "killed": {"slurmctld": None},
    "stopped": {"slurmctld": "T"},
    "no role line": {"log": None},
    "unreachable": None,
}


def _two(name: str, state: str, ping: str) -> Probe | Unreachable:
    fields = _STATES[state]
    if fields is None:
        return Unreachable(name)
    return Probe(name=name, ping=ping, **{"log": "slurmctld_log_ctl2_standby.txt", **fields})  # type: ignore[arg-type]


def _three(name: str, state: str, up: tuple[bool, bool, bool]) -> Probe | Unreachable:
    fields = _STATES[state]
    return Unreachable(name) if fields is None else three(name, up, **fields)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(sorted(_STATES)), min_size=1, max_size=2))
def test_any_standbys_give_one_consistent_answer(states: list[str]) -> None:
    """Whatever the standbys' states (two or three controllers): each configured controller
    beside the active one is ready or has a reason, never both; the level follows the counts."""
    names = ["ctl2", "ctl3"][: len(states)]
    down = [_STATES[state] is None or state in ("killed", "stopped") for state in states]
    if len(states) == 1:
        ping = "Slurmctld(primary) at ctl1 is UP\nSlurmctld(backup) at ctl2 is " + (
            "DOWN" if down[0] else "UP"
        )
        primary = Probe(ping=ping)
        others = [_two(name, state, ping) for name, state in zip(names, states, strict=True)]
    else:
        up = (True, not down[0], not down[1])
        primary = three("ctl1", up)
        others = [_three(name, state, up) for name, state in zip(names, states, strict=True)]
    verdict = verdict_of(primary, *others)
    assert verdict.active_controller == "ctl1"
    assert verdict.verified, verdict.reasons  # a standby's state alone never makes it DEGRADED
    assert set(verdict.standbys) | set(verdict.not_ready) == set(names)
    assert not set(verdict.standbys) & set(verdict.not_ready)
    assert list(verdict.standbys) == [n for n, s in zip(names, states, strict=True) if s == "standby"]
    ready = len(verdict.standbys)
    if ready == len(names):
        assert verdict.redundancy == "full"
    elif ready:
        assert verdict.redundancy == "reduced"
    else:
        assert verdict.redundancy in ("none", "unknown")
        unknown = any(s == "no role line" for s in states)
        assert verdict.redundancy == ("unknown" if unknown else "none")
