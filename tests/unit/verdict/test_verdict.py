"""From the controllers' reports to one verdict: every verdict, and the situations of the captures.

Reports are built the way the health check builds them (``tests.unit.verdict.cases.verdict_probes``); the
cases are tabled by concern in ``tests.unit.verdict.cases.verdict_cases_*``.
"""

from __future__ import annotations

import json

import pytest

import hyperpod_ha.verdict as verdict_package
from hyperpod_ha.controllers.models import ControllerReport, ReportStatus
from hyperpod_ha.errors import InputRejected
from hyperpod_ha.verdict import (
    DEGRADED,
    FAILED_OVER,
    HEALTHY,
    UNKNOWN,
    VERIFIED,
    ConvergenceInputError,
    VerdictInputError,
    VerdictName,
    evaluate,
    reports_from_json,
)
from hyperpod_ha.verdict.reasons import Reason, ReasonCode
from tests.unit.verdict.cases.verdict_cases_crash_cause import CRASH_CAUSE_CASES, CTL1_DIED, CTL2_DIED
from tests.unit.verdict.cases.verdict_cases_degraded import DEGRADED_CASES
from tests.unit.verdict.cases.verdict_cases_drift import DRIFT_CASES
from tests.unit.verdict.cases.verdict_cases_readyz import READYZ_CASES
from tests.unit.verdict.cases.verdict_cases_takeover import TAKEOVER_CASES
from tests.unit.verdict.cases.verdict_probes import (
    CTL1_KILLED,
    CTL2_TOOK_OVER,
    STANDBY,
    Case,
    Probe,
    Unreachable,
    verdict_of,
)

CASES = TAKEOVER_CASES + DEGRADED_CASES + DRIFT_CASES + READYZ_CASES + CRASH_CAUSE_CASES


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_verdict(case: Case) -> None:
    verdict = verdict_of(*case.controllers, policy=case.policy)
    assert verdict.name is case.verdict, verdict.reasons
    assert verdict.active_controller == case.active
    assert verdict.verified is (case.verdict in VERIFIED)
    for code, words in case.reasons:
        assert any(r.code is code and words in r.text for r in verdict.reasons), (
            code,
            words,
            verdict.reasons,
        )


def test_every_verdict_is_covered() -> None:
    assert {case.verdict for case in CASES} == set(VerdictName)


def test_only_healthy_and_failed_over_are_verified() -> None:
    assert {HEALTHY, FAILED_OVER} == VERIFIED
    for case in CASES:
        if "cut off" in case.id:
            assert case.verdict not in VERIFIED


def test_a_ping_label_is_not_who_is_active() -> None:
    # ctl2 answers "Slurmctld(backup) ... is UP" after taking over, and before, in standby.
    before = verdict_of(Probe(), STANDBY)
    after = verdict_of(CTL1_KILLED, CTL2_TOOK_OVER)
    assert before.evidence["ctl2"]["answers_ping"] is True
    assert before.evidence["ctl2"]["active"] is False
    assert after.evidence["ctl2"]["active"] is True
    assert after.evidence["ctl2"]["logged_role"] == "primary"


def test_no_reports_at_all() -> None:
    verdict = evaluate([])
    assert verdict.name is UNKNOWN
    assert verdict.configured_primary is None
    assert verdict.evidence == {}


def test_verdict_json() -> None:
    verdict = evaluate([Probe().report(), STANDBY.report()], attempt=2)
    data = verdict.to_json()
    assert set(data) == {
        "verdict",
        "verified",
        "reasons",
        "reason_codes",
        "active_controller",
        "configured_primary",
        "evidence",
        "attempt",
        "problem",
        "redundancy",
        "standbys",
        "not_ready",
        "advisories",
        "missed_notifications",
    }
    assert (data["redundancy"], data["standbys"], data["not_ready"]) == ("full", ["ctl2"], {})
    assert (data["verdict"], data["verified"], data["active_controller"], data["configured_primary"]) == (
        "HEALTHY",
        True,
        "ctl1",
        "ctl1",
    )
    assert data["attempt"] == 2
    assert data["evidence"]["ctl1"] == {
        "position": 0,
        "instance_id": "i-0ctl1000000000000",
        "address": "10.214.0.11",
        "target": "sagemaker-cluster:hplab0000001_controller-machine-i-0ctl1000000000000",
        "status": "CHECKED",
        "reason": None,
        "active": True,
        "answers_ping": True,
        "writes_heartbeat": True,
        "slurmctld": "running",
        "logged_role": "primary",
        "takeover_refusal": None,
        "slurmctld_fatal": None,
        "slurmdbd_reachable": True,
        "slurmdbd_registered_host": "10.214.0.11",
        "slurmdbd_error": None,
        "state_save_writable": True,
        "heartbeat_age_seconds": 1,
        "heartbeat_writer": "ctl1",
        "sinfo_answers": True,
        "readyz": None,
        "readyz_why": "/readyz: not in the probe output",
        "hyperpod_node_actions": [],
        "slurm_triggers_missing": None,
        "slurm_trigger_program": None,
        "slurm_version": "24.11.5",
        "slurm_link": None,
        "slurm_conf_link": True,
        "slurm_conf_resolved": "/fsx/hyperpod/lab/opt/slurm/etc/slurm.conf",
        "slurm_conf_sha256": "5" * 16,
        "on_prog": "executable",
        "off_prog": "executable",
        "slurmctld_log": "/var/log/slurm/slurmctld.log",
        "state_save_location": "/srv/hplab/shared/state",
    }


def test_reports_from_json_keep_bad_entries_as_unchecked() -> None:
    good = Probe().report().to_json()
    caught = {"Error": "States.TaskFailed", "Cause": '{"errorMessage": "boom"}'}
    reports = reports_from_json([good, {"instance_id": "i-0bad", "status": "MAYBE"}, caught, "junk"])
    assert [r.status for r in reports] == [ReportStatus.CHECKED] + [ReportStatus.PROBE_FAILED] * 3
    assert reports[1].instance_id == "i-0bad"
    assert reports[1].reason is not None
    assert reports[1].reason.startswith("report unreadable: report.status is not one of")
    assert reports[2].reason == "health check failed: States.TaskFailed"
    verdict = evaluate(reports)
    assert verdict.name is DEGRADED  # checks that gave nothing may hide any controller
    unread = [r.text for r in verdict.reasons if r.code is ReasonCode.CHECK_GAVE_NO_EVIDENCE]
    assert any(text.startswith("the check of i-0bad gave no evidence: report unreadable") for text in unread)
    with pytest.raises(VerdictInputError):
        reports_from_json({"reports": []})


def test_verdict_json_is_bounded() -> None:
    reports = [Unreachable("ctl1").report()] * 40
    long = ControllerReport(instance_id="i-" + "x" * 300, status=ReportStatus.UNREACHABLE, reason="y" * 300)
    verdict = evaluate([*reports, long])
    assert len(verdict.reasons) <= 24
    assert all(len(reason.text) <= 240 for reason in verdict.reasons)
    assert len(json.dumps(verdict.to_json())) <= 32 * 1024


def test_the_public_names_stay_importable() -> None:
    # hyperpod_ha.verdict was one module; these are the names its importers may use.
    names = {
        *("VerdictName", "HEALTHY", "FAILED_OVER", "DEGRADED", "SPLIT_BRAIN", "DOWN", "UNKNOWN", "VERIFIED"),
        *("MAX_REASONS", "MAX_REPORTS", "DEFAULT_SLURMCTLD_TIMEOUT", "VerdictInputError", "VerdictPolicy"),
        *("Verdict", "reports_from_json", "evaluate"),
    }
    assert names <= set(verdict_package.__all__)
    assert all(hasattr(verdict_package, name) for name in verdict_package.__all__)


def test_bad_input_is_rejected_input() -> None:
    assert issubclass(VerdictInputError, InputRejected)
    assert issubclass(ConvergenceInputError, InputRejected)
    assert issubclass(VerdictInputError, ValueError)  # what callers caught before


def test_degraded_names_what_is_unhealthy_and_on_whom() -> None:
    verdict = evaluate(
        [
            Probe(dbd="sacctmgr_cluster_refused.txt", dbd_rc=1).report(),
            Probe(
                name="ctl2",
                log="slurmctld_log_ctl2_standby.txt",
                dbd="sacctmgr_cluster_refused.txt",
                dbd_rc=1,
            ).report(),
        ]
    )
    assert verdict.name == "DEGRADED"
    assert verdict.problem is not None
    assert verdict.problem.startswith("slurmdbd does not answer from ctl1, ctl2: ")
    assert Reason(ReasonCode.SLURMDBD_NOT_ANSWERING, verdict.problem) in verdict.reasons
    assert verdict.to_json()["problem"] == verdict.problem
    # Only DEGRADED has one: the other verdicts' headlines say what is wrong.
    assert evaluate([Probe().report(), STANDBY.report()]).problem is None


def test_the_evidence_says_how_to_reach_each_controller_and_where_to_look() -> None:
    verdict = evaluate([Probe().report(), STANDBY.report()])
    for entry in verdict.evidence.values():
        assert entry["instance_id"]
        assert "address" in entry
        assert "target" in entry
        assert "slurmctld_log" in entry
        assert "state_save_location" in entry


def test_the_verdict_names_the_advisories_of_the_running_releases() -> None:
    verdict = evaluate([Probe().report(), STANDBY.report()])
    (row,) = verdict.to_json()["advisories"]
    assert row["advisory"] == "slurm-security-2026-09"
    assert (row["releases"], row["controllers"]) == (["24.11.5"], ["ctl1", "ctl2"])
    assert not any("advisor" in reason for reason in verdict.texts)  # told beside, never weighed


def test_a_death_not_after_a_change_is_not_tied_to_it() -> None:
    # ctl2 took its role after slurm.conf changed, then died (its acct_gather.conf, say): not the change.
    settled_after = Probe(
        name="ctl2",
        slurmctld=None,
        log=(
            "[2026-11-29T23:39:00.000] slurmctld running in background mode\n"
            "[2026-11-29T23:39:30.000] fatal: Could not open/read/parse acct_gather.conf file"
        ),
        conf_ages=(("slurm.conf", 200),),
    )
    # Changed long before the death: not its cause either.
    long_before = Probe(**{**CTL2_DIED.__dict__, "conf_ages": (("slurm.conf", 50_000),)})
    for standby in (settled_after, long_before):
        verdict = evaluate([Probe().report(), standby.report()])
        assert not any("began to die" in reason for reason in verdict.texts), verdict.texts
    assert any("began to die" in r for r in evaluate([CTL1_DIED.report(), CTL2_DIED.report()]).texts)


def test_failed_publishes_of_the_on_off_program_are_a_note_counted_once() -> None:
    from dataclasses import replace

    from hyperpod_ha.controllers.models import NotifyFailuresEvidence

    log = "/fsx/aws/hyperpod/c/var/log/slurm/notification_attempts.log"
    failed = NotifyFailuresEvidence(
        path=log, failures=2, last_failure="Failed to send notification to SNS. Error: x", age_seconds=120
    )
    reports = [replace(p.report(), notify_failures=failed) for p in (Probe(), STANDBY)]
    verdict = evaluate(reports)
    assert verdict.name is HEALTHY
    assert verdict.missed_notifications == 2  # one shared file, seen by both controllers
    assert (
        "the failover topic missed events: 2 publish(es) of the ON/OFF program failed, the last 2 min ago "
        f"({log}): Failed to send notification to SNS. Error: x"
    ) in verdict.texts
    old = [replace(r, notify_failures=replace(failed, age_seconds=7200)) for r in reports]
    assert evaluate(old).missed_notifications == 0
