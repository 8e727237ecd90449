"""``scontrol ping``, on every real capture we have and on any text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hyperpod_ha.slurm import (
    PingLine,
    SlurmOutputError,
    parse_ping,
)
from tests.unit.slurm.cases.captures import blocks, capture, poller_outputs

PING_BLOCKS = blocks("scontrol_ping_outputs.txt")
PING_POLLS = poller_outputs("scontrol_ping_poller_lines.txt")


def test_the_ping_fixtures_hold_every_captured_output() -> None:
    assert len(PING_BLOCKS) == 17
    assert len(PING_POLLS) > 100


@pytest.mark.parametrize(("where", "rc", "text"), PING_BLOCKS, ids=[b[0] for b in PING_BLOCKS])
def test_parse_ping_on_every_captured_scontrol_ping(where: str, rc: int, text: str) -> None:
    lines = parse_ping(text)
    states = re.findall(r"is (UP|DOWN)$", text, flags=re.MULTILINE)
    assert [line.host for line in lines] == ["ctl1", "ctl2"]
    assert [line.label for line in lines] == ["primary", "backup"]
    assert [line.responding for line in lines] == [state == "UP" for state in states]
    # scontrol ping exits 0 when any controller answered
    assert (rc == 0) == any(line.responding for line in lines)


def test_parse_ping_on_every_captured_poller_result() -> None:
    for rc, text in PING_POLLS:
        lines = parse_ping(text)
        assert [line.index for line in lines] == [0, 1]
        assert (rc == 0) == any(line.responding for line in lines), text


def test_a_standby_backup_answers_ping_up() -> None:
    # 03: ctl2 is in standby (its log says so) and still answers UP: the label is a position.
    assert parse_ping(capture("ping_all_up.txt")) == [
        PingLine(host="ctl1", label="primary", responding=True),
        PingLine(host="ctl2", label="backup", responding=True),
    ]


def test_parse_ping_after_failover_skips_the_root_banner() -> None:
    assert parse_ping(capture("ping_primary_down.txt")) == [
        PingLine(host="ctl1", label="primary", responding=False),
        PingLine(host="ctl2", label="backup", responding=True),
    ]


def test_parse_ping_of_real_22_05_with_three_controllers() -> None:
    # scontrol 22.05.8 itself, three SlurmctldHost lines, none reachable (README of the fixtures)
    lines = parse_ping(capture("ping_three_down_real_22_05.txt"))
    assert [(line.host, line.label, line.index, line.responding) for line in lines] == [
        ("ctlA", "primary", 0, False),
        ("ctlB", "backup1", 1, False),
        ("ctlC", "backup2", 2, False),
    ]


def test_parse_ping_with_three_controllers_uses_numbered_backups() -> None:
    # scontrol's format with three SlurmctldHost lines: "backup%d" with the 0-based position.
    text = (
        "Slurmctld(primary) at ip-10-1-0-11 is DOWN\n"
        "Slurmctld(backup1) at ip-10-1-0-12 is UP\n"
        "Slurmctld(backup2) at ip-10-1-0-13 is UP\n"
        "*****************************************\n"
        "** RESTORE SLURMCTLD DAEMON TO SERVICE **\n"
        "*****************************************\n"
    )
    lines = parse_ping(text)
    assert [(line.label, line.index, line.responding) for line in lines] == [
        ("primary", 0, False),
        ("backup1", 1, True),
        ("backup2", 2, True),
    ]


def test_parse_ping_reads_session_manager_line_endings() -> None:
    text = capture("ping_primary_down.txt").replace("\n", "\r\n")
    assert [line.responding for line in parse_ping(text)] == [False, True]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n\n",
        "*****************************************\n** RESTORE SLURMCTLD DAEMON TO SERVICE **\n",
        "scontrol: unrecognized option '--json'\nTry \"scontrol --help\" for more information\n",
        capture("sinfo_connect_failure.txt"),
        "Slurmctld(primary) at ctl1 is UP\nscontrol: error: something else\n",
        "Slurmctld(primary) at ctl1 is MAYBE\n",
        "Slurmctld(backup) at ctl1 is UP\n",  # a backup in the primary's place
        "Slurmctld(primary) at ctl1 is UP\nSlurmctld(backup1) at ctl2 is UP\n",  # two: "backup"
        "Slurmctld(primary) at a is UP\nSlurmctld(backup) at b is UP\nSlurmctld(backup) at c is UP\n",
    ],
)
def test_parse_ping_rejects_what_is_not_ping_output(text: str) -> None:
    with pytest.raises(SlurmOutputError):
        parse_ping(text)


def test_ping_errors_are_value_errors() -> None:
    with pytest.raises(ValueError, match="not scontrol ping output"):
        parse_ping("bash: scontrol: command not found")


@given(st.text())
def test_parse_ping_on_any_text_returns_lines_or_raises_its_error(text: str) -> None:
    try:
        lines = parse_ping(text)
    except SlurmOutputError:
        return
    assert lines
    assert all(isinstance(line, PingLine) for line in lines)


ping_texts = st.lists(
    st.tuples(st.from_regex(r"[a-z][a-z0-9.-]{0,20}", fullmatch=True), st.booleans()), min_size=1, max_size=6
)


@given(ping_texts, st.booleans(), st.booleans())
def test_parse_ping_reads_back_what_scontrol_would_print(
    controllers: list[tuple[str, bool]], banner: bool, crlf: bool
) -> None:
    out = []
    for position, (host, up) in enumerate(controllers):
        label = "primary" if position == 0 else ("backup" if len(controllers) == 2 else f"backup{position}")
        out.append(f"Slurmctld({label}) at {host} is {'UP' if up else 'DOWN'}")
    if banner:
        out += ["*" * 41, "** RESTORE SLURMCTLD DAEMON TO SERVICE **", "*" * 41]
    text = ("\r\n" if crlf else "\n").join(out) + "\n"
    lines = parse_ping(text)
    assert [(line.host, line.responding) for line in lines] == controllers
    assert [line.index for line in lines] == list(range(len(controllers)))
