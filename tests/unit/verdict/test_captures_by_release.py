"""The parsers, the health report and the verdict on real Slurm 24.11.5 and 25.11.7 output from the lab.

The ``*_24_11*`` and ``*_25_11*`` files of hyperpod_ha_dev/captures were captured from the lab
running each build (see that directory's README); every test runs on both. The 22.05 captures
beside them are tested in tests/unit/slurm and test_verdict.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from hyperpod_ha.slurm import (
    decode_heartbeat,
    parse_cluster_registrations,
    parse_dbd_ping,
    parse_ping,
    parse_role_log,
    parse_show_config,
)
from hyperpod_ha.verdict import DOWN, FAILED_OVER, HEALTHY
from hyperpod_ha.verdict.reasons import Reason, ReasonCode
from hyperpod_ha_dev import CAPTURES
from tests.unit.verdict.cases.verdict_probes import Probe, verdict_of


@dataclass(frozen=True)
class Release:
    """What one release's captures hold, beside what every release's do."""

    suffix: str  # of the capture files: "24_11"
    version: str
    primary_events: tuple[str, ...]  # the primary's role lines from its start
    takeover_events: tuple[str, ...]  # the backup's after SIGKILL of the primary
    started: str  # the probe's time, shortly after the lab's controllers started
    after: str  # the probe's time, shortly after the takeover
    takeover_age: int  # seconds from "Running as primary controller" to ``after``

    def name(self, stem: str) -> str:
        return f"{stem}_{self.suffix}.txt"

    def text(self, stem: str) -> str:
        return (CAPTURES / self.name(stem)).read_text()

    def __str__(self) -> str:
        return self.version


RELEASES = (
    Release(
        "24_11",
        "24.11.5",
        ("starting", "primary"),
        # 24.11 restarts itself to take over: "taking over", a SIGTERM line, then primary.
        ("taking_over", "stopping", "primary"),
        started="2026-11-30T20:19:58",
        after="2026-11-30T20:20:45",
        takeover_age=7,
    ),
    Release(
        "25_11",
        "25.11.7",
        # The lab's up ends with `scontrol reconfigure` on 25.11 (state files): it restarts in place.
        ("starting", "primary", "starting", "primary"),
        ("taking_over", "stopping", "primary"),
        started="2026-12-04T07:48:19",
        after="2026-12-04T07:48:55",
        takeover_age=7,
    ),
)
by_release = pytest.mark.parametrize("release", RELEASES, ids=str)


@by_release
def test_scontrol_ping_is_22_05s_format(release: Release) -> None:
    up = parse_ping(release.text("ping_all_up"))
    down = parse_ping(release.text("ping_primary_down"))
    cut_off = parse_ping(release.text("ping_isolated_primary_from_ctl2"))

    assert [(p.host, p.label, p.responding) for p in up] == [
        ("ctl1", "primary", True),
        ("ctl2", "backup", True),
    ]
    assert [(p.host, p.responding) for p in down] == [("ctl1", False), ("ctl2", True)]
    assert [(p.host, p.responding) for p in cut_off] == [("ctl1", False), ("ctl2", True)]


@by_release
def test_sacctmgr_ping_exists(release: Release) -> None:
    answered = parse_dbd_ping(release.text("sacctmgr_ping"))
    refused = parse_dbd_ping(release.text("sacctmgr_ping_refused"))

    assert answered.supported
    assert [up for _, up in answered.responding] == [True]
    assert refused.supported
    assert [up for _, up in refused.responding] == [False]


@by_release
def test_show_config(release: Release) -> None:
    config = parse_show_config(release.text("show_config"))

    assert config.version == release.version
    assert [(h.name, h.address) for h in config.controllers] == [
        ("ctl1", "10.214.0.11"),
        ("ctl2", "10.214.0.12"),
    ]
    assert config.slurmctld_timeout == 10
    assert config.state_save_location == "/srv/hplab/shared/state"


@by_release
def test_cluster_registration(release: Release) -> None:
    (row,) = parse_cluster_registrations(release.text("sacctmgr_cluster"))

    assert row.cluster == "lab"
    assert row.control_port == 6817


@by_release
def test_the_heartbeat_is_16_bytes_of_time_and_writer(release: Release) -> None:
    primary = decode_heartbeat((CAPTURES / f"heartbeat_{release.suffix}.bin").read_bytes())
    backup = decode_heartbeat((CAPTURES / f"heartbeat_writer1_{release.suffix}.bin").read_bytes())

    assert primary[1] == 0
    assert backup[1] == 1
    assert backup[0] > primary[0] > 1_700_000_000


@by_release
def test_role_lines(release: Release) -> None:
    primary = parse_role_log(release.text("slurmctld_log_ctl1_primary"))
    standby = parse_role_log(release.text("slurmctld_log_ctl2_standby"))
    takeover = parse_role_log(release.text("slurmctld_log_ctl2_takeover"))

    assert tuple(line.event for line in primary.lines) == release.primary_events
    assert [line.event for line in standby.lines] == ["starting", "standby"]
    assert tuple(line.event for line in takeover.lines) == release.takeover_events
    assert takeover.refusals == ()
    assert takeover.fatal is None


@by_release
def test_refusal_lines(release: Release) -> None:
    refuses = parse_role_log(release.text("slurmctld_log_ctl2_refuses"))
    waits = parse_role_log(release.text("slurmctld_log_ctl2_waits"))

    # Cut from the log after the standby's start (its role lines are in the standby capture).
    assert refuses.last is None
    assert {r.kind for r in refuses.refusals} == {"heartbeat_unreadable"}
    assert refuses.refusals[-1].message.startswith("Not taking control. Primary slurmctld is unresponsive")
    assert waits.last_refusal is not None
    assert waits.last_refusal.kind == "waiting_for_heartbeat"
    assert waits.last_refusal.message == "Waiting for heartbeat file to exist..."


@by_release
def test_verdicts_on_the_captures(release: Release) -> None:
    refusal = parse_role_log(release.text("slurmctld_log_ctl2_refuses")).refusals[-1]
    assert refusal.timestamp is not None
    now = refusal.timestamp  # the probe looked right after the last refusal
    down_ping = release.name("ping_primary_down")
    ctl1_killed = Probe(name="ctl1", slurmctld=None, ping=down_ping, heartbeat=(0, 30))
    refusing = Probe(
        name="ctl2",
        log=release.name("slurmctld_log_ctl2_refuses"),
        ping=down_ping,
        heartbeat="missing",
        now_local=now,
    )

    down = verdict_of(ctl1_killed, refusing)
    up_ping = release.name("ping_all_up")
    healthy = verdict_of(
        Probe(log=release.name("slurmctld_log_ctl1_primary"), ping=up_ping, now_local=release.started),
        Probe(
            name="ctl2",
            log=release.name("slurmctld_log_ctl2_standby"),
            ping=up_ping,
            now_local=release.started,
        ),
    )
    failed_over = verdict_of(
        Probe(
            name="ctl1",
            slurmctld=None,
            ping=down_ping,
            heartbeat=(1, 1),
            dbd="sacctmgr_cluster_ctl2.txt",
            now_local=release.after,
        ),
        Probe(
            name="ctl2",
            log=release.name("slurmctld_log_ctl2_takeover"),
            ping=down_ping,
            heartbeat=(1, 1),
            dbd="sacctmgr_cluster_ctl2.txt",
            now_local=release.after,
        ),
    )

    assert down.name is DOWN
    (refused,) = [r.text for r in down.reasons if r.code is ReasonCode.TAKEOVER_REFUSED]
    assert refused.startswith("ctl2 refuses to take over")
    assert "could not be read" in refused
    assert healthy.name is HEALTHY
    assert failed_over.name is FAILED_OVER
    assert failed_over.active_controller == "ctl2"
    assert failed_over.reasons[0].code is ReasonCode.BACKUP_TOOK_OVER
    assert failed_over.reasons[0].text.startswith(
        "ctl2 (SlurmctldHost[1]) took over from ctl1: logged 'Running as primary controller' "
        f"{release.takeover_age} s ago"
    )


def test_25_11_s_backup_exits_taking_over_without_state_files() -> None:
    # Captured right after a fresh lab up without its state-file step: SIGKILL of ctl1, then
    # ctl2 takes over, restarts itself, and exits (src/common/assoc_mgr.c:6050).
    died = parse_role_log(CAPTURES.joinpath("slurmctld_log_ctl2_fatal_25_11.txt").read_text())
    fatal = died.fatal

    assert [line.event for line in died.lines] == ["taking_over", "stopping"]
    assert fatal is not None
    assert fatal.message == "No Assoc usage file (/srv/hplab/shared/state/assoc_usage) to recover"
    ctl1_killed = Probe(name="ctl1", slurmctld=None, ping="ping_both_down_25_11.txt", heartbeat=(0, 30))
    ctl2_died = Probe(
        name="ctl2",
        slurmctld=None,
        log="slurmctld_log_ctl2_fatal_25_11.txt",
        ping="ping_both_down_25_11.txt",
        heartbeat=(0, 30),
        now_local="2026-12-04T07:48:01",
    )

    verdict = verdict_of(ctl1_killed, ctl2_died)

    assert verdict.name is DOWN
    assert list(verdict.reasons[:2]) == [
        Reason(ReasonCode.NO_ACTIVE_CONTROLLER, "no controller is active"),
        Reason(
            ReasonCode.SLURMCTLD_FATAL,
            f"ctl2: its slurmctld exited on a fatal error 25 s ago: {fatal.message}",
        ),
    ]
    assert verdict.evidence["ctl2"]["slurmctld_fatal"] == fatal.message
