"""``strigger --get``'s table and the probe's ``slurm_triggers`` section."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hyperpod_ha.slurm import (
    TRIGGER_PROGRAM_PATH,
    installed_events,
    missing_events,
    parse_strigger_get,
    parse_trigger_check,
)
from hyperpod_ha.slurm.triggers import TRIGGER_EVENTS
from hyperpod_ha_dev import CAPTURES

EVERY = tuple(event.name for event in TRIGGER_EVENTS)
HEADER = "TRIG_ID RES_TYPE   RES_ID TYPE                                OFFSET USER     FLAGS PROGRAM"


def row(
    trig_id: int, event: str, program: str, flags: str = "PERM", user: str = "slurm", res: str = "slurmctld"
) -> str:
    """A row as strigger prints it: ``%7u %-9s %7s %-35s %6d %-8s %-5s %s``."""
    return f"{trig_id:7d} {res:<9} {'*':>7} {event:<35} {0:6d} {user:<8} {flags:<5} {program}"


def test_a_row_in_slurms_columns() -> None:
    text = "\n".join(
        [HEADER, row(7, "backup_slurmctld_failure", f"{TRIGGER_PROGRAM_PATH} backup_slurmctld_failure")]
    )
    (found,) = parse_strigger_get(text)
    assert (found.trig_id, found.res_type, found.res_id, found.type, found.offset) == (
        7,
        "slurmctld",
        "*",
        "backup_slurmctld_failure",
        0,
    )
    assert (found.user, found.flags, found.program) == (
        "slurm",
        "PERM",
        f"{TRIGGER_PROGRAM_PATH} backup_slurmctld_failure",
    )
    assert found.is_ours()


def test_ours_is_permanent_with_our_program_and_its_event() -> None:
    ours = f"{TRIGGER_PROGRAM_PATH} primary_slurmctld_failure"
    rows = parse_strigger_get(
        "\n".join(
            [
                HEADER,
                row(1, "primary_slurmctld_failure", ours, flags=""),  # fires once: not ours
                row(2, "backup_slurmctld_failure", f"{TRIGGER_PROGRAM_PATH} primary_slurmctld_failure"),
                row(3, "primary_database_failure", "/opt/site/page.sh", res="database"),
                row(
                    4,
                    "primary_slurmdbd_failure",
                    f"{TRIGGER_PROGRAM_PATH} primary_slurmdbd_failure",
                    user="slurmadmin1",
                    res="slurmdbd",
                ),
                row(5, "down", "/opt/site/node_down.sh", res="node"),
            ]
        )
    )
    assert [r.flags for r in rows] == ["", "PERM", "PERM", "PERM", "PERM"]
    assert installed_events(rows) == ("primary_slurmdbd_failure",)
    assert missing_events(rows) == tuple(e for e in EVERY if e != "primary_slurmdbd_failure")


def test_every_event_installed() -> None:
    rows = parse_strigger_get(
        "\n".join(row(i, e, f"{TRIGGER_PROGRAM_PATH} {e}") for i, e in enumerate(EVERY))
    )
    assert installed_events(rows) == EVERY
    assert missing_events(rows) == ()


def test_the_probe_section() -> None:
    text = "\n".join(
        [
            f"program={TRIGGER_PROGRAM_PATH}",
            "program_state=executable",
            "program_topic=arn:aws:sns:eu-west-1:123456789012:failover",
            row(1, "backup_slurmctld_failure", f"{TRIGGER_PROGRAM_PATH} backup_slurmctld_failure"),
        ]
    )
    check = parse_trigger_check(text, 0)
    assert (check.program_state, check.program_topic, check.answered, check.error) == (
        "executable",
        "arn:aws:sns:eu-west-1:123456789012:failover",
        True,
        None,
    )
    assert check.missing == EVERY[1:]


def test_the_probe_section_when_slurmctld_does_not_answer() -> None:
    text = "\n".join(
        [
            "program_state=missing",
            "program_topic=",
            "get_error=Unable to contact slurm controller (connect failure)",
        ]
    )
    check = parse_trigger_check(text, 1)
    assert (check.answered, check.missing, check.program_state, check.program_topic) == (
        False,
        None,
        "missing",
        None,
    )
    assert check.error == "strigger --get exited 1: Unable to contact slurm controller (connect failure)"
    assert parse_trigger_check("", 1).error == "strigger --get exited 1: no output"
    assert parse_trigger_check("program_state=weird\nprogram_topic=arn:x;rm", 0).program_state is None


@settings(max_examples=200)
@given(st.text())
def test_any_text_gives_rows_or_nothing(text: str) -> None:
    for found in parse_strigger_get(text):
        assert found.program.startswith("/")
    parse_trigger_check(text, 0)
    parse_trigger_check(text, 1)


def test_the_labs_real_table_after_an_install() -> None:
    """Slurm 25.11.7's own output (dev/hyperpod_ha_dev/captures/README.md): the install's 11, ours."""
    rows = parse_strigger_get((CAPTURES / "strigger_get_25_11.txt").read_text())
    assert [row.trig_id for row in rows] == list(range(1, 12))
    assert {row.res_type for row in rows} == {"slurmctld", "slurmdbd", "database"}
    assert {(row.res_id, row.user, row.offset) for row in rows} == {("*", "root", 0)}
    assert installed_events(rows) == EVERY


def test_a_fired_permanent_trigger_is_still_ours() -> None:
    """A PERM trigger that fired is listed again (its copy, first): still installed."""
    rows = parse_strigger_get((CAPTURES / "strigger_get_after_firing_25_11.txt").read_text())
    assert [row.trig_id for row in rows][:2] == [3, 1]
    assert installed_events(rows) == EVERY
