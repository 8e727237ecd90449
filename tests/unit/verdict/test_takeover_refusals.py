"""Slurm 24.11's standby says why it does not take over; the probe collects it, the verdict uses it.

The log lines are Slurm 24.11.5's own strings (src/slurmctld/backup.c, ``error("%s",
abort_msg)`` and ``warning("Waiting for heartbeat file to exist...")``) as slurmctld writes
them to its log file (``[time] error: ...``); the 24.11 captures in hyperpod_ha_dev/captures
are checked the same way where they exist.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hyperpod_ha.controllers.models import RoleEvidence
from hyperpod_ha.probe import probe_script
from hyperpod_ha.slurm import parse_role_log
from hyperpod_ha.verdict import DEGRADED, DOWN
from hyperpod_ha.verdict.reasons import Reason, ReasonCode
from hyperpod_ha_dev import CAPTURES
from tests.unit.verdict.cases.verdict_probes import CTL1_KILLED, Probe, verdict_of

UNREADABLE = (
    "Not taking control. Primary slurmctld is unresponsive, but heartbeat file could not be read. "
    "Something is wrong with your StateSaveLocation."
)
UPDATING = (
    "Not taking control. Primary slurmctld is unresponsive, but is still updating the heartbeat file. "
    "Check for clock skew."
)
UNDETERMINED = (
    "Not taking control. Primary slurmctld is unresponsive, but not yet able to determine if primary "
    "may actually be running."
)
WAITING = "Waiting for heartbeat file to exist..."
# The probe's role section of the standby reads these times against now_local 23:40:00.
STANDBY_START = (
    "[2026-11-29T23:38:00.101] slurmctld version 24.11.5 started on cluster lab\n"
    "[2026-11-29T23:38:00.350] slurmctld running in background mode"
)


def refused(message: str, level: str = "error", at: str = "23:39:57") -> str:
    return f"{STANDBY_START}\n[2026-11-29T{at}.004] {level}: {message}"


@pytest.mark.parametrize(
    ("message", "level", "kind"),
    [
        (UNREADABLE, "error", "heartbeat_unreadable"),
        (UPDATING, "error", "heartbeat_updating"),
        (UNDETERMINED, "error", "undetermined"),
        (WAITING, "warning", "waiting_for_heartbeat"),
    ],
)
def test_refusal_lines_after_the_last_role_line(message: str, level: str, kind: str) -> None:
    log = parse_role_log(f"now_local=2026-11-29T23:40:00\nsource=file:/x\n{refused(message, level)}")

    assert log.last is not None
    assert log.last.event == "standby"
    assert log.last_refusal is not None
    assert log.last_refusal.kind == kind
    assert log.last_refusal.message == message
    assert log.age_seconds(log.last_refusal) == 3


def test_a_role_line_after_a_refusal_ends_it() -> None:
    text = refused(UNREADABLE) + (
        "\n[2026-11-29T23:39:58.000] error: ControlMachine ctl1 not responding, BackupController1 ctl2 "
        "taking over\n[2026-11-29T23:39:58.500] Running as primary controller"
    )
    log = parse_role_log(text)

    assert log.refusals == ()
    assert log.last is not None
    assert log.last.event == "primary"


def test_22_05_logs_have_no_refusals() -> None:
    captures = CAPTURES
    for path in sorted(captures.glob("slurmctld_log_*.txt")):
        if "24_11" not in path.name and "25_11" not in path.name:
            assert parse_role_log(path.read_text()).refusals == (), path.name


def _probe_role_section(log_lines: str, tmp_path: Path) -> str:
    """The probe's own ``last_role_lines`` over a log file (newest first, as it reads it)."""
    log = tmp_path / "slurmctld.log"
    log.write_text(log_lines + "\n")
    script = probe_script()
    # The probe's definitions without its call of main.
    definitions = script[: script.rindex("main ")]
    done = subprocess.run(
        ["bash", "-c", f'{definitions}\ntac "$1" | last_role_lines', "probe", str(log)],
        capture_output=True,
        text=True,
        check=True,
        timeout=10,
    )
    return done.stdout


def test_the_probe_keeps_refusals_newer_than_the_last_role_line(tmp_path: Path) -> None:
    many = "\n".join(
        f"[2026-11-29T23:39:{second:02d}.000] error: {UNREADABLE}" for second in range(10, 40, 3)
    )
    noise = "[2026-11-29T23:39:59.000] error: get_last_heartbeat: heartbeat open attempt failed from /s/hb."
    old = f"[2026-11-29T23:37:00.000] error: {UPDATING}"

    out = _probe_role_section(f"{old}\n{STANDBY_START}\n{many}\n{noise}", tmp_path).splitlines()

    assert out[:2] == STANDBY_START.splitlines()
    assert len(out) == 5  # the two role lines and the three newest refusals, oldest first
    assert out[2:] == [f"[2026-11-29T23:39:{second}.000] error: {UNREADABLE}" for second in (31, 34, 37)]


def test_the_probe_stops_at_eight_role_lines(tmp_path: Path) -> None:
    lines = [f"[2026-11-29T23:{m:02d}:00.000] slurmctld running in background mode" for m in range(20)]

    out = _probe_role_section("\n".join([f"[2026-11-29T22:00:00.000] error: {WAITING}", *lines]), tmp_path)

    assert out.splitlines() == lines[-8:]


STANDBY_REFUSES = Probe(
    name="ctl2",
    log=refused(UNREADABLE),
    ping="ping_primary_down.txt",
    heartbeat="missing",
    dbd="sacctmgr_cluster_ctl1.txt",
)


def test_primary_killed_and_the_standby_refuses_is_down_saying_why() -> None:
    verdict = verdict_of(CTL1_KILLED, STANDBY_REFUSES)

    assert verdict.name is DOWN
    assert verdict.active_controller is None
    assert verdict.reasons[:2] == (
        Reason(ReasonCode.NO_ACTIVE_CONTROLLER, "no controller is active"),
        Reason(ReasonCode.TAKEOVER_REFUSED, f"ctl2 refuses to take over (3 s ago): {UNREADABLE}"),
    )
    assert verdict.evidence["ctl2"]["takeover_refusal"] == "heartbeat_unreadable"


def test_a_standby_waiting_for_the_heartbeat_file_is_down_saying_why() -> None:
    waiting = Probe(
        name="ctl2",
        log=refused(WAITING, "warning", "23:39:59"),
        ping="ping_primary_down.txt",
        heartbeat="missing",
    )

    verdict = verdict_of(CTL1_KILLED, waiting)

    assert verdict.name is DOWN
    assert verdict.reasons[1] == Reason(
        ReasonCode.TAKEOVER_WAITS_FOR_HEARTBEAT,
        "ctl2 waits for the heartbeat file to exist (1 s ago): it cannot take over until it reads it",
    )


def test_an_old_refusal_is_over() -> None:
    # Logged 60 s before the probe: SlurmctldTimeout (10 s) plus slack has passed without another.
    old = Probe(name="ctl2", log=refused(UNREADABLE, at="23:39:00"), ping="ping_primary_down.txt")

    verdict = verdict_of(CTL1_KILLED, old)

    assert verdict.name is DOWN
    assert ReasonCode.TAKEOVER_REFUSED not in {reason.code for reason in verdict.reasons}


def test_a_standby_that_would_refuse_beside_an_active_primary_is_degraded() -> None:
    # ctl1 answers ctl2 no more (partition between the controllers) but still beats.
    standby = Probe(name="ctl2", log=refused(UPDATING), ping="ping_primary_down.txt")

    verdict = verdict_of(Probe(), standby)

    assert verdict.name is DEGRADED
    assert (
        Reason(ReasonCode.TAKEOVER_REFUSED, f"ctl2 refuses to take over (3 s ago): {UPDATING}")
        in verdict.reasons
    )


def test_role_evidence_survives_json_with_a_refusal() -> None:
    report = STANDBY_REFUSES.report()

    again = type(report).from_json(report.to_json())

    assert again.role == report.role
    assert isinstance(again.role, RoleEvidence)
    assert again.role.refusal == "heartbeat_unreadable"
    assert again.role.refusal_age_seconds == 3


# Slurm 25.11.7's words (src/common/assoc_mgr.c:6050): a backup that takes over while the
# StateSaveLocation has a clustername file but no assoc_usage yet (the first PERIODIC_CHECKPOINT,
# 300 s, after a fresh start) exits at once.
NO_ASSOC_USAGE = "No Assoc usage file (/srv/hplab/shared/state/assoc_usage) to recover"
DIED_TAKING_OVER = (
    "[2026-11-29T23:39:40.000] error: ControlMachine ctl1 not responding, BackupController1 ctl2 "
    f"taking over\n[2026-11-29T23:39:50.000] fatal: {NO_ASSOC_USAGE}"
)


def test_a_fatal_line_after_the_last_role_line_is_kept() -> None:
    log = parse_role_log(f"now_local=2026-11-29T23:40:00\n{STANDBY_START}\n{DIED_TAKING_OVER}")

    assert log.last is not None
    assert log.last.event == "taking_over"
    assert log.fatal is not None
    assert log.fatal.message == NO_ASSOC_USAGE
    assert log.age_seconds(log.fatal) == 10


def test_a_start_after_a_fatal_line_ends_it() -> None:
    again = "[2026-11-29T23:39:55.000] slurmctld version 25.11.7 started on cluster lab"

    assert parse_role_log(f"{DIED_TAKING_OVER}\n{again}").fatal is None


def test_the_probe_keeps_the_newest_fatal_line_after_the_last_role_line(tmp_path: Path) -> None:
    older = f"[2026-11-29T23:30:00.000] fatal: {UNREADABLE}"
    newer = f"[2026-11-29T23:39:51.000] fatal: {NO_ASSOC_USAGE}, second"
    journal = f"2026-11-29T23:39:52+0000 ctl2 slurmctld[812]: fatal: {NO_ASSOC_USAGE}"
    noise = "[2026-11-29T23:39:53.000] error: fatalistic but not fatal"

    out = _probe_role_section(f"{older}\n{STANDBY_START}\n{DIED_TAKING_OVER}\n{newer}\n{noise}", tmp_path)
    from_journal = _probe_role_section(f"{STANDBY_START}\n{journal}", tmp_path)

    assert out.splitlines() == [*STANDBY_START.splitlines(), DIED_TAKING_OVER.splitlines()[0], newer]
    assert parse_role_log(from_journal).fatal == parse_role_log(journal).fatal
    assert parse_role_log(journal).fatal is not None


def test_a_backup_that_died_taking_over_is_down_in_its_own_words() -> None:
    died = Probe(
        name="ctl2",
        slurmctld=None,
        log=f"{STANDBY_START}\n{DIED_TAKING_OVER}",
        ping="ping_primary_down.txt",
        heartbeat="missing",
    )

    verdict = verdict_of(CTL1_KILLED, died)

    assert verdict.name is DOWN
    assert verdict.reasons[:2] == (
        Reason(ReasonCode.NO_ACTIVE_CONTROLLER, "no controller is active"),
        Reason(
            ReasonCode.SLURMCTLD_FATAL,
            f"ctl2: its slurmctld exited on a fatal error 10 s ago: {NO_ASSOC_USAGE}",
        ),
    )
    assert verdict.evidence["ctl2"]["slurmctld_fatal"] == NO_ASSOC_USAGE


def test_a_standby_that_died_beside_an_active_primary_says_why() -> None:
    died = Probe(name="ctl2", slurmctld=None, log=f"{STANDBY_START}\n[2026-11-29T23:39:00.000] fatal: oops")

    verdict = verdict_of(Probe(), died)

    # A down standby lowers the redundancy (none left here); the reasons say why it is down.
    assert verdict.redundancy == "none"
    assert (
        Reason(
            ReasonCode.STANDBY_DOWN,
            "standby ctl2: slurmctld not running: its slurmctld exited on a fatal error 1 min ago: oops",
        )
        in verdict.reasons
    )


def test_a_running_slurmctld_has_no_fatal_reason() -> None:
    # A fatal line with a daemon running is an old daemon's whose start line rotated away.
    running = Probe(name="ctl2", log=f"{STANDBY_START}\n[2026-11-29T23:39:00.000] fatal: oops")

    verdict = verdict_of(Probe(), running)

    assert not any("fatal" in reason.text for reason in verdict.reasons)
    assert verdict.evidence["ctl2"]["slurmctld_fatal"] == "oops"
