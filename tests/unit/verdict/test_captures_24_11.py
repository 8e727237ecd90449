"""The parsers, the health report and the verdict on real Slurm 24.11.5 output from the lab.

The ``*_24_11*`` files of hyperpod_ha_dev/captures were captured from the lab running the
24.11.5 build (see that directory's README); the 22.05 captures beside them are tested in
tests/unit/slurm and test_verdict.py.
"""

from __future__ import annotations

from hyperpod_ha.slurm import (
    decode_heartbeat,
    parse_cluster_registrations,
    parse_dbd_ping,
    parse_ping,
    parse_role_log,
    parse_show_config,
)
from hyperpod_ha.verdict import DOWN, FAILED_OVER, HEALTHY
from hyperpod_ha_dev import CAPTURES
from tests.unit.verdict.cases.verdict_probes import Probe, verdict_of


def capture(name: str) -> str:
    return (CAPTURES / name).read_text()


def test_scontrol_ping_of_24_11_is_22_05s_format() -> None:
    up = parse_ping(capture("ping_all_up_24_11.txt"))
    down = parse_ping(capture("ping_primary_down_24_11.txt"))
    cut_off = parse_ping(capture("ping_isolated_primary_from_ctl2_24_11.txt"))

    assert [(p.host, p.label, p.responding) for p in up] == [
        ("ctl1", "primary", True),
        ("ctl2", "backup", True),
    ]
    assert [(p.host, p.responding) for p in down] == [("ctl1", False), ("ctl2", True)]
    assert [(p.host, p.responding) for p in cut_off] == [("ctl1", False), ("ctl2", True)]


def test_sacctmgr_ping_exists_in_24_11() -> None:
    answered = parse_dbd_ping(capture("sacctmgr_ping_24_11.txt"))
    refused = parse_dbd_ping(capture("sacctmgr_ping_refused_24_11.txt"))

    assert answered.supported
    assert [up for _, up in answered.responding] == [True]
    assert refused.supported
    assert [up for _, up in refused.responding] == [False]


def test_show_config_of_24_11() -> None:
    config = parse_show_config(capture("show_config_24_11.txt"))

    assert config.version == "24.11.5"
    assert [(h.name, h.address) for h in config.controllers] == [
        ("ctl1", "10.214.0.11"),
        ("ctl2", "10.214.0.12"),
    ]
    assert config.slurmctld_timeout == 10
    assert config.state_save_location == "/srv/hplab/shared/state"


def test_cluster_registration_of_24_11() -> None:
    (row,) = parse_cluster_registrations(capture("sacctmgr_cluster_24_11.txt"))

    assert row.cluster == "lab"
    assert row.control_port == 6817


def test_the_24_11_heartbeat_is_16_bytes_of_time_and_writer() -> None:
    primary = decode_heartbeat((CAPTURES / "heartbeat_24_11.bin").read_bytes())
    backup = decode_heartbeat((CAPTURES / "heartbeat_writer1_24_11.bin").read_bytes())

    assert primary[1] == 0
    assert backup[1] == 1
    assert backup[0] > primary[0] > 1_700_000_000


def test_role_lines_of_24_11() -> None:
    primary = parse_role_log(capture("slurmctld_log_ctl1_primary_24_11.txt"))
    standby = parse_role_log(capture("slurmctld_log_ctl2_standby_24_11.txt"))
    takeover = parse_role_log(capture("slurmctld_log_ctl2_takeover_24_11.txt"))

    assert [line.event for line in primary.lines] == ["starting", "primary"]
    assert [line.event for line in standby.lines] == ["starting", "standby"]
    # 24.11 restarts itself to take over: "taking over", a SIGTERM line, then primary.
    assert [line.event for line in takeover.lines] == ["taking_over", "stopping", "primary"]
    assert takeover.refusals == ()


def test_refusal_lines_of_24_11() -> None:
    refuses = parse_role_log(capture("slurmctld_log_ctl2_refuses_24_11.txt"))
    waits = parse_role_log(capture("slurmctld_log_ctl2_waits_24_11.txt"))

    # Cut from the log after the standby's start (its role lines are in the standby capture).
    assert refuses.last is None
    assert {r.kind for r in refuses.refusals} == {"heartbeat_unreadable"}
    assert refuses.refusals[-1].message.startswith("Not taking control. Primary slurmctld is unresponsive")
    assert waits.last_refusal is not None
    assert waits.last_refusal.kind == "waiting_for_heartbeat"
    assert waits.last_refusal.message == "Waiting for heartbeat file to exist..."


def test_verdicts_on_24_11_captures() -> None:
    refusal = parse_role_log(capture("slurmctld_log_ctl2_refuses_24_11.txt")).refusals[-1]
    assert refusal.timestamp is not None
    now = refusal.timestamp  # the probe looked right after the last refusal
    ctl1_killed = Probe(name="ctl1", slurmctld=None, ping="ping_primary_down_24_11.txt", heartbeat=(0, 30))
    refusing = Probe(
        name="ctl2",
        log="slurmctld_log_ctl2_refuses_24_11.txt",
        ping="ping_primary_down_24_11.txt",
        heartbeat="missing",
        now_local=now,
    )

    down = verdict_of(ctl1_killed, refusing)
    started = "2026-11-30T20:19:58"  # ten seconds after the lab's controllers started
    healthy = verdict_of(
        Probe(log="slurmctld_log_ctl1_primary_24_11.txt", ping="ping_all_up_24_11.txt", now_local=started),
        Probe(
            name="ctl2",
            log="slurmctld_log_ctl2_standby_24_11.txt",
            ping="ping_all_up_24_11.txt",
            now_local=started,
        ),
    )
    after = "2026-11-30T20:20:45"  # seven seconds after ctl2 took over
    failed_over = verdict_of(
        Probe(
            name="ctl1",
            slurmctld=None,
            ping="ping_primary_down_24_11.txt",
            heartbeat=(1, 1),
            dbd="sacctmgr_cluster_ctl2.txt",
            now_local=after,
        ),
        Probe(
            name="ctl2",
            log="slurmctld_log_ctl2_takeover_24_11.txt",
            ping="ping_primary_down_24_11.txt",
            heartbeat=(1, 1),
            dbd="sacctmgr_cluster_ctl2.txt",
            now_local=after,
        ),
    )

    assert down.name is DOWN
    assert any(r.startswith("ctl2 refuses to take over") and "could not be read" in r for r in down.reasons)
    assert healthy.name is HEALTHY
    assert failed_over.name is FAILED_OVER
    assert failed_over.active_controller == "ctl2"
    assert failed_over.reasons[0].startswith(
        "ctl2 (SlurmctldHost[1]) took over from ctl1: logged 'Running as primary controller' 7 s ago"
    )
