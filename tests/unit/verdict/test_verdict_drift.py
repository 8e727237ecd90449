"""Drift that breaks the next failover: no false positive on a healthy cluster (two and three
controllers, one unreachable, fields a node could not tell), HyperPod's SlurmConfigStrategy in
the reason of a local copy, and the strategy read from the workflow's input."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import pytest

from hyperpod_ha.verdict import DEGRADED, HEALTHY, VerdictPolicy, VerdictRequest, decide, evaluate
from hyperpod_ha.verdict.reasons import Reason, ReasonCode
from tests.unit.verdict.cases.verdict_probes import (
    CTL1_KILLED,
    CTL2_TOOK_OVER,
    SHARED_CONF,
    STANDBY,
    Conf,
    Probe,
    Unreachable,
    three_all_up,
    verdict_of,
)

C = ReasonCode
DRIFT = frozenset(
    {
        C.SLURM_CONF_LOCAL_COPY,
        C.SLURM_CONF_DIFFERS,
        C.SLURM_VERSION_DIFFERS,
        C.SLURMCTLD_HOSTS_DIFFER,
        C.SLURMCTLD_TIMEOUT_DIFFERS,
        C.STATE_SAVE_LOCATION_DIFFERS,
        C.STATE_SAVE_DEVICE_DIFFERS,
        C.NOTIFICATIONS_OFF,
        C.NOTIFICATION_PROGRAM_UNSET,
        C.NOTIFICATION_PROGRAM_BROKEN,
    }
)


def no_drift(reasons: Iterable[Reason]) -> bool:
    return not any(reason.code in DRIFT for reason in reasons)


@pytest.mark.parametrize(
    "controllers",
    [
        pytest.param((Probe(), STANDBY), id="two controllers"),
        pytest.param(tuple(three_all_up()), id="three controllers"),
        pytest.param((Probe(), Unreachable("ctl2")), id="one controller unreachable"),
        pytest.param((CTL1_KILLED, CTL2_TOOK_OVER), id="after a failover"),
        # A node that could not tell a field (no slurm.conf found, no failover_conf section, an
        # unknown version) is not compared: unknown is not a difference.
        pytest.param((Probe(), dataclasses.replace(STANDBY, conf=None)), id="a standby told nothing"),
        pytest.param((Probe(), dataclasses.replace(STANDBY, conf=Conf(version=None))), id="no version"),
        # SLURM_CONF naming the shared copy itself: a file, not a link, but the same file.
        pytest.param(
            (Probe(), dataclasses.replace(STANDBY, conf=Conf(link=False, resolved=SHARED_CONF))),
            id="the shared copy read directly",
        ),
    ],
)
def test_no_drift_on_a_healthy_cluster(controllers: tuple[Probe | Unreachable, ...]) -> None:
    verdict = verdict_of(*controllers)
    assert verdict.verified, verdict.reasons
    assert no_drift(verdict.reasons), verdict.reasons


def test_an_unreachable_controller_is_not_compared() -> None:
    # ctl3 cannot be checked; ctl1 and ctl2 agree: nothing about ctl3's configuration is told.
    ctl1, ctl2, _ = three_all_up()
    verdict = verdict_of(ctl1, ctl2, Unreachable("ctl3"))
    assert no_drift(verdict.reasons), verdict.reasons


def test_every_drift_is_told_at_once() -> None:
    drifted = Conf(link=False, sha256="6" * 64, version="25.11.7", timeout=30, programs=False)
    verdict = verdict_of(Probe(), dataclasses.replace(STANDBY, conf=drifted))
    assert verdict.name is DEGRADED
    told = [r for r in verdict.reasons if not no_drift((r,))]
    assert len(told) == 5, verdict.reasons
    assert all("ctl2" in reason.text for reason in told)


def test_the_config_strategy_is_told_with_a_local_copy() -> None:
    reports = [Probe().report(), dataclasses.replace(STANDBY, conf=Conf(link=False)).report()]
    (local,) = [
        r.text
        for r in evaluate(reports, config_strategy="Managed").reasons
        if r.code is C.SLURM_CONF_LOCAL_COPY
    ]
    assert local.endswith("; HyperPod's cluster agent also writes slurm.conf (SlurmConfigStrategy Managed)")
    (plain,) = [r.text for r in evaluate(reports).reasons if r.code is C.SLURM_CONF_LOCAL_COPY]
    assert "SlurmConfigStrategy" not in plain
    # Only a local copy mentions it.
    assert not any(
        "SlurmConfigStrategy" in r.text for r in evaluate(reports[:1], config_strategy="Merge").reasons
    )


@pytest.mark.parametrize(
    ("accounting", "expected"),
    [
        ({"mode": "internal", "config_strategy": "Overwrite", "database": None}, "Overwrite"),
        ({"mode": "internal", "config_strategy": None, "database": None}, None),
        ({"config_strategy": "Over write; rm"}, None),
        ({"config_strategy": "x" * 33}, None),
        ({"config_strategy": 7}, None),
        ("Managed", None),
        (None, None),
    ],
)
def test_the_workflow_passes_the_strategy_from_discovery(accounting: object, expected: str | None) -> None:
    local = dataclasses.replace(STANDBY, conf=Conf(link=False)).report().to_json()
    request = VerdictRequest.from_event(
        {"reports": [Probe().report().to_json(), local], "accounting": accounting}
    )
    assert request.config_strategy == expected
    result = decide(request, VerdictPolicy())
    given = zip(result["reason_codes"], result["reasons"], strict=True)
    (reason,) = [text for code, text in given if code == C.SLURM_CONF_LOCAL_COPY]
    assert ("SlurmConfigStrategy" in reason) is (expected is not None)


def test_drift_fixed_gives_the_verdict_back() -> None:
    drifted = verdict_of(Probe(), dataclasses.replace(STANDBY, conf=Conf(link=False, sha256="6" * 64)))
    healed = verdict_of(Probe(), STANDBY)
    assert (drifted.name, healed.name) == (DEGRADED, HEALTHY)


def test_hashes_are_compared_whole() -> None:
    # Two hashes alike in the 12 digits a reason shows are still two slurm.conf.
    other = Conf(sha256="5" * 12 + "6" * 52)
    verdict = verdict_of(Probe(), dataclasses.replace(STANDBY, conf=other))
    assert verdict.name is DEGRADED
    assert (
        Reason(
            C.SLURM_CONF_DIFFERS,
            "slurm.conf differs between controllers: "
            "sha256 555555555555 on ctl1; sha256 555555555555 on ctl2",
        )
        in verdict.reasons
    )
