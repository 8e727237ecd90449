"""Missing Slurm triggers, and a controller without their program, are drift with SlurmTriggers=on."""

from __future__ import annotations

import dataclasses

from hyperpod_ha.slurm import TRIGGER_PROGRAM_PATH
from hyperpod_ha.slurm.triggers import TRIGGER_EVENTS
from hyperpod_ha.verdict import DEGRADED, DOWN, HEALTHY, VerdictPolicy
from hyperpod_ha.verdict.reasons import ReasonCode
from hyperpod_ha.verdict.slurm_triggers import missing_text
from tests.unit.verdict.cases.verdict_cases_crash_cause import CTL1_DIED, CTL2_DIED
from tests.unit.verdict.cases.verdict_probes import STANDBY, Probe, Unreachable, verdict_of

EVERY = tuple(event.name for event in TRIGGER_EVENTS)
ON = VerdictPolicy(slurm_triggers=True)
TOPIC = "arn:aws:sns:eu-west-1:123456789012:slurm-failover"


def section(installed: tuple[str, ...], program: str = "executable") -> tuple[str, int]:
    rows = [
        f"{i:7d} slurmctld {'*':>7} {e:<35} {0:6d} {'slurm':<8} {'PERM':<5} {TRIGGER_PROGRAM_PATH} {e}"
        for i, e in enumerate(installed, 1)
    ]
    head = [f"program={TRIGGER_PROGRAM_PATH}", f"program_state={program}", f"program_topic={TOPIC}"]
    return "\n".join(head + rows), 0


ALL = section(EVERY)
NONE = section((), program="missing")
DOWN_ANSWER = ("program_state=executable\nget_error=Unable to contact slurm controller (connect failure)", 1)


def codes(*controllers: Probe | Unreachable, policy: VerdictPolicy = ON) -> tuple[str, list[str]]:
    verdict = verdict_of(*controllers, policy=policy)
    return verdict.name.value, [code for code in verdict.codes if code.startswith("slurm-trigger")]


def test_every_trigger_and_program_there_is_healthy() -> None:
    assert codes(Probe(triggers=ALL), dataclasses.replace(STANDBY, triggers=ALL)) == (HEALTHY, [])


def test_none_installed_is_one_reason_for_the_cluster() -> None:
    verdict = verdict_of(Probe(triggers=NONE), dataclasses.replace(STANDBY, triggers=NONE), policy=ON)
    assert verdict.name is DEGRADED
    (reason,) = [r for r in verdict.reasons if r.code is ReasonCode.SLURM_TRIGGERS_MISSING]
    assert reason.text == (
        "Slurm triggers missing: none of the 11 hyperpod-ha sets is there (strigger --get); "
        "the watchdog installs them (SlurmTriggersDocument, mode=install)"
    )
    assert verdict.problem == reason.text  # severity 3, and the only problem
    assert verdict.evidence["ctl1"]["slurm_triggers_missing"] == 11


def test_some_missing_are_named() -> None:
    two_missing = section(EVERY[2:])
    verdict = verdict_of(
        Probe(triggers=two_missing), dataclasses.replace(STANDBY, triggers=two_missing), policy=ON
    )
    (reason,) = [r for r in verdict.reasons if r.code is ReasonCode.SLURM_TRIGGERS_MISSING]
    assert reason.text == (
        "Slurm triggers missing (2 of 11): backup_slurmctld_failure, backup_slurmctld_assumed_control; "
        "the watchdog installs them (SlurmTriggersDocument, mode=install)"
    )


def test_the_answer_with_the_most_triggers_is_the_clusters() -> None:
    """Every controller asks the active slurmctld: one that answered more is the newer answer."""
    assert codes(Probe(triggers=ALL), dataclasses.replace(STANDBY, triggers=NONE)) == (
        DEGRADED,
        ["slurm-trigger-program-missing"],
    )


def test_a_controller_without_the_program_is_named() -> None:
    verdict = verdict_of(
        Probe(triggers=ALL), dataclasses.replace(STANDBY, triggers=section(EVERY, "missing")), policy=ON
    )
    (reason,) = [r for r in verdict.reasons if r.code is ReasonCode.SLURM_TRIGGER_PROGRAM_MISSING]
    assert reason.text == (
        f"the Slurm trigger program {TRIGGER_PROGRAM_PATH} is missing on ctl2: the triggers publish nothing "
        "while ctl2 is in control; the watchdog installs it"
    )


def test_unknown_is_not_drift() -> None:
    """No answer (slurmctld away, no strigger, a probe before the section) says nothing."""
    assert codes(Probe(triggers=DOWN_ANSWER), dataclasses.replace(STANDBY, triggers=DOWN_ANSWER)) == (
        HEALTHY,
        [],
    )
    assert codes(Probe(), STANDBY) == (HEALTHY, [])
    assert codes(Probe(triggers=ALL), Unreachable("ctl2")) == (HEALTHY, [])


def test_off_is_no_drift() -> None:
    off = VerdictPolicy()
    assert off.slurm_triggers is False
    assert codes(Probe(triggers=NONE), dataclasses.replace(STANDBY, triggers=NONE), policy=off) == (
        HEALTHY,
        [],
    )
    assert VerdictPolicy.from_environment({"SLURM_TRIGGERS": "on"}).slurm_triggers is True


def test_beside_down_it_is_only_told() -> None:
    verdict = verdict_of(
        dataclasses.replace(CTL1_DIED, triggers=NONE),
        dataclasses.replace(CTL2_DIED, triggers=NONE),
        policy=ON,
    )
    assert verdict.name is DOWN
    assert verdict.codes[0] == "no-active-controller"
    assert "slurm-triggers-missing" in verdict.codes


def test_the_reason_fits_an_excerpt() -> None:
    for count in range(1, len(EVERY)):
        assert len(missing_text(count, EVERY[:8])) <= 240
