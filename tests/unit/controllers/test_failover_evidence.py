"""The report's ``failover`` evidence (what the next failover needs from a controller) from the
probe's sections, and the verdict on whole probe outputs captured on the lab (Slurm 24.11.5:
healthy, after ``conf-drift ctl2`` and after ``onprog-off ctl1``; Slurm 25.11.7: healthy, and
after SIGKILL of ctl1)."""

from __future__ import annotations

import json

import pytest

from hyperpod_ha.controllers.check import report_from_result
from hyperpod_ha.controllers.models import Controller, ControllerReport, ProgramEvidence
from hyperpod_ha.verdict import DEGRADED, FAILED_OVER, HEALTHY, evaluate
from hyperpod_ha.verdict.drift import NOTIFICATIONS_OFF
from hyperpod_ha.verdict.reasons import ReasonCode
from tests.unit.controllers.cases.probe_outputs import NODE, capture, probe_text, result, section

SHARED = "/srv/hplab/shared/etc/slurm.conf"
ON = "/srv/hplab/shared/bin/slurmctld_primary_on"


def lab_node(name: str) -> Controller:
    index = name[-1]
    return Controller(
        instance_id=f"i-0000000000000c00{index}",
        group="controller-machine",
        status="Running",
        private_ip=f"10.214.0.1{index}",
        hostname=name,
        target=f"sagemaker-cluster:hplab0000001_controller-machine-i-0000000000000c00{index}",
    )


def lab_report(name: str, probe_capture: str) -> ControllerReport:
    report = report_from_result(lab_node(name), result(capture(probe_capture)))
    # The report survives the workflow's JSON unchanged.
    assert ControllerReport.from_json(json.loads(json.dumps(report.to_json()))) == report
    return report


@pytest.mark.parametrize(("release", "version"), [("24_11", "24.11.5"), ("25_11", "25.11.7")])
def test_the_failover_evidence_of_a_captured_controller(release: str, version: str) -> None:
    failover = lab_report("ctl1", f"probe_ctl1_{release}.txt").failover

    assert failover.version == version
    assert (failover.conf_path, failover.conf_link, failover.conf_resolved) == (
        "/etc/slurm/slurm.conf",
        True,
        SHARED,
    )
    assert (failover.conf_fstype, failover.conf_source) == ("ext4", "/dev/vda")
    assert [h.name for h in failover.controllers] == ["ctl1", "ctl2"]
    assert (failover.slurmctld_timeout, failover.state_save_location) == (10, "/srv/hplab/shared/state")
    assert failover.on_prog == failover.running_on_prog == ProgramEvidence(True, ON, "executable")
    assert failover.error is None


def test_without_the_section_every_field_is_unknown() -> None:
    missing = report_from_result(NODE, result(probe_text(failover_conf=None))).failover
    timed_out = report_from_result(
        NODE,
        result(probe_text(failover_conf=section("failover_conf", "version=24.11.5", 124, timed_out=True))),
    ).failover

    assert missing.error == "failover configuration: not in the probe output"
    assert timed_out.error == "failover configuration: timed out after 0.0 s"
    for failover in (missing, timed_out):
        assert (failover.version, failover.conf_link, failover.conf_sha256) == (None, None, None)
        assert failover.on_prog.configured is None


def test_an_unreadable_slurm_conf_leaves_its_values_unknown() -> None:
    garbled = section("slurm_conf", "path=/etc/slurm/slurm.conf\nSlurmctldTimeout=soon")
    failover = report_from_result(NODE, result(probe_text(slurm_conf=garbled))).failover

    assert (failover.controllers, failover.slurmctld_timeout, failover.state_save_location) == (
        (),
        None,
        None,
    )
    assert failover.version == "24.11.5"  # the other fields still count


@pytest.mark.parametrize("release", ["24_11", "25_11"])
def test_captured_healthy_controllers_are_healthy(release: str) -> None:
    verdict = evaluate(
        [lab_report("ctl1", f"probe_ctl1_{release}.txt"), lab_report("ctl2", f"probe_ctl2_{release}.txt")]
    )
    assert verdict.name is HEALTHY, verdict.reasons


def test_captured_25_11_failover_is_failed_over() -> None:
    # The probe on both controllers 20 s after SIGKILL of ctl1's slurmctld (Slurm 25.11.7).
    verdict = evaluate(
        [
            lab_report("ctl1", "probe_ctl1_failover_25_11.txt"),
            lab_report("ctl2", "probe_ctl2_failover_25_11.txt"),
        ]
    )

    assert verdict.name is FAILED_OVER, verdict.reasons
    assert verdict.active_controller == "ctl2"
    assert verdict.evidence["ctl2"]["slurm_version"] == "25.11.7"
    assert verdict.evidence["ctl2"]["slurmctld_fatal"] is None


def test_captured_conf_drift_on_ctl2_is_degraded_naming_it() -> None:
    reports = [
        lab_report("ctl1", "probe_ctl1_conf_drift_ctl2_24_11.txt"),
        lab_report("ctl2", "probe_ctl2_conf_drift_24_11.txt"),
    ]
    verdict = evaluate(reports, config_strategy="Overwrite")

    assert verdict.name is DEGRADED
    assert verdict.active_controller == "ctl1"
    said = {reason.code: reason.text for reason in verdict.reasons}
    assert said[ReasonCode.SLURM_CONF_LOCAL_COPY] == (
        "slurm.conf on ctl2 is a local copy: /etc/slurm/slurm.conf is a file, not a link to the shared copy "
        "as on ctl1; HyperPod's cluster agent also writes slurm.conf (SlurmConfigStrategy Overwrite)"
    )
    assert said[ReasonCode.SLURM_CONF_DIFFERS].startswith("slurm.conf differs between controllers: sha256 ")
    assert said[ReasonCode.SLURMCTLD_TIMEOUT_DIFFERS] == (
        "SlurmctldTimeout differs between controllers: 10 s on ctl1; 20 s on ctl2"
    )
    assert verdict.evidence["ctl2"]["slurm_conf_link"] is False
    assert verdict.evidence["ctl1"]["slurm_conf_link"] is True


def test_captured_onprog_off_on_ctl1_is_degraded_naming_it() -> None:
    reports = [
        lab_report("ctl1", "probe_ctl1_onprog_off_24_11.txt"),
        lab_report("ctl2", "probe_ctl2_onprog_off_ctl1_24_11.txt"),
    ]
    verdict = evaluate(reports)

    assert verdict.name is DEGRADED
    (off,) = [r.text for r in verdict.reasons if r.code is ReasonCode.NOTIFICATIONS_OFF]
    # ctl2's own slurm.conf names the programs (it would publish once it takes over): only ctl1's.
    assert off == (
        NOTIFICATIONS_OFF.format("ctl1") + " (no SlurmctldPrimaryOnProg or SlurmctldPrimaryOffProg in the "
        "running configuration or ctl1's slurm.conf)"
    )
    (local,) = [r.text for r in verdict.reasons if r.code is ReasonCode.SLURM_CONF_LOCAL_COPY]
    assert local.startswith("slurm.conf on ctl1 is a local copy")
    assert verdict.evidence["ctl1"]["on_prog"] == "not set"
    assert verdict.evidence["ctl2"]["on_prog"] == "executable"
