"""slurmctld's log: the role lines of every captured log."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hyperpod_ha.slurm import (
    ProbeSection,
    classify_refusal_line,
    classify_role_line,
    parse_probe_output,
    parse_role_log,
)
from hyperpod_ha_dev import CAPTURES
from tests.conftest import ROOT
from tests.fakes.probe_output import format_probe_output
from tests.unit.slurm.cases.captures import capture
from tests.unit.slurm.cases.forged_log import HEADERS, PHRASES, USER_TEXT_STARTS

# The first lab's captures (Slurm 22.05.8), in ../shared beside the project where it is.
SHARED_CAPTURES = ROOT.parent / "shared" / "captures"


def probe_text_with_role(text: str) -> str:
    """The probe's output with one section, ``role``, holding ``text``."""
    role = ProbeSection(name="role", text=text, exit_code=0, millis=10, timed_out=False, truncated=False)
    return format_probe_output([role])


@pytest.mark.parametrize(
    ("name", "last", "events"),
    [
        ("slurmctld_log_ctl1_primary.txt", "primary", ["starting", "primary"]),
        ("slurmctld_log_ctl2_standby.txt", "standby", ["starting", "standby"]),
        ("slurmctld_log_ctl2_takeover.txt", "primary", ["taking_over", "stopping", "primary"]),
        ("slurmctld_log_ctl2_takeover_04b.txt", "primary", ["taking_over", "stopping", "primary"]),
        ("slurmctld_log_ctl1_restart.txt", "primary", ["starting", "primary"]),
        ("slurmctld_log_ctl2_control_back.txt", "standby", ["stopping", "standby"]),
        ("slurmctld_log_ctl1_takeover_shutdown.txt", "stopping", ["stopping"]),
        ("slurmctld_log_ctl2_takeover_requested.txt", "primary", ["taking_over", "stopping", "primary"]),
        ("slurmctld_log_ctl1_partitioned.txt", None, []),
        ("slurmctld_log_ctl2_partitioned.txt", None, []),
    ],
)
def test_role_lines_of_every_captured_log(name: str, last: str | None, events: list[str]) -> None:
    log = parse_role_log(
        "now_local=2026-11-29T23:40:00\nsource=file:/var/log/slurmctld.log\n" + capture(name)
    )
    assert [line.event for line in log.lines] == events
    assert (log.last.event if log.last else None) == last
    assert log.source == "file:/var/log/slurmctld.log"


def test_role_line_age_and_journal_lines() -> None:
    log = parse_role_log(
        "now_local=2026-11-29T23:30:00\nsource=journal:slurmctld\n"
        "2026-11-29T23:29:53+0000 ctl1 slurmctld[7841]: Running as primary controller\n"
    )
    assert log.last is not None
    assert log.last.event == "primary"
    assert log.age_seconds(log.last) == 7


# --- a user's text in slurmctld's log says nothing (issue 35, finding 1) -------------------


def _says_nothing(line: str) -> bool:
    log = parse_role_log(f"now_local=2026-11-29T23:40:00\nsource=file:/x\n{line}")
    return (
        classify_role_line(line) is None
        and classify_refusal_line(line) is None
        and (log.lines, log.refusals, log.fatal) == ((), (), None)
    )


def test_the_issues_partition_string_is_no_standby_line() -> None:
    # The active controller's log on the lab after `sbatch -p "slurmctld running in background mode"`.
    forged = (
        "[2026-12-04T07:50:01.120] _get_job_parts: invalid partition specified: "
        "slurmctld running in background mode"
    )
    log = parse_role_log(capture("slurmctld_log_ctl1_primary.txt") + forged + "\n")

    assert log.last is not None
    assert log.last.event == "primary"
    assert _says_nothing(forged)


@pytest.mark.parametrize("phrase", PHRASES)
@pytest.mark.parametrize("header", HEADERS)
@pytest.mark.parametrize("start", USER_TEXT_STARTS)
def test_a_phrase_inside_a_message_says_nothing(header: str, start: str, phrase: str) -> None:
    assert _says_nothing(f"{header}{start}{phrase}")
    assert _says_nothing(f"{header}{start}{HEADERS[0]}{phrase}")  # with a forged time as well


@pytest.mark.parametrize("phrase", PHRASES)
@pytest.mark.parametrize("header", HEADERS)
def test_the_same_phrase_as_slurmctlds_whole_message_counts(header: str, phrase: str) -> None:
    line = f"{header}{phrase}"
    if phrase.startswith("ControlMachine"):  # slurmctld logs it with its level word only
        assert _says_nothing(line)
    else:
        assert classify_role_line(line) or classify_refusal_line(line) or parse_role_log(line).fatal


@pytest.mark.parametrize("phrase", PHRASES)
def test_a_carriage_return_is_text_not_a_line_break(phrase: str) -> None:
    forged = f"[2026-11-29T23:39:57.004] _get_job_parts: invalid partition specified: x\r{HEADERS[0]}{phrase}"
    assert _says_nothing(forged)
    # Through the probe's output as well: a section keeps the "\r" inside its line.
    section = f"source=file:/x\n{forged}"
    output = parse_probe_output(probe_text_with_role(section))
    assert "\r" in output.sections["role"].text
    assert _says_nothing(output.sections["role"].text)


def test_a_line_of_another_process_in_slurmctlds_journal_says_nothing() -> None:
    assert _says_nothing("2026-11-29T23:30:42+0000 ctl2 systemd[1]: Running as primary controller")
    assert _says_nothing("2026-11-29T23:30:42+0000 ctl2 sbatch[12]: slurmctld running in background mode")
    assert _says_nothing("Running as primary controller")  # no time: not slurmctld's line


@pytest.mark.parametrize(
    ("line", "event", "timestamp"),
    [
        ("[2026-11-29T23:29:53.870] Running as primary controller", "primary", "2026-11-29T23:29:53"),
        ("[2026-11-29T23:29:53] Running as primary controller", "primary", "2026-11-29T23:29:53"),
        ("[2026-11-29T23:29:53.870+01:00] Running as primary controller", "primary", "2026-11-29T23:29:53"),
        ("[Nov 29 23:29:53] Running as primary controller", "primary", None),
        (
            "2026-11-29T23:29:53+0000 ctl1 slurmctld[7841]: Running as primary controller",
            "primary",
            "2026-11-29T23:29:53",
        ),
        (
            "2026-11-29T23:29:53+00:00 ctl1 slurmctld[7841]: [2026-11-29T23:29:53.870] "
            "Terminate signal SIGTERM received",
            "stopping",
            "2026-11-29T23:29:53",
        ),
        (
            "2026-11-29T23:29:53+0000 ctl1 slurmctld[7841]: slurmctld: "
            "slurmctld version 22.05.8 started on cluster lab",
            "starting",
            "2026-11-29T23:29:53",
        ),
    ],
)
def test_slurmctlds_own_line_in_each_form(line: str, event: str, timestamp: str | None) -> None:
    log = parse_role_log(line)
    assert log.last is not None
    assert (log.last.event, log.last.timestamp) == (event, timestamp)


def test_every_role_line_of_the_real_captures_still_counts() -> None:
    phrases = (
        "primary controller",
        "background mode",
        "taking over",
        "Terminate signal",
        "started on cluster",
    )
    seen = 0
    for directory in (CAPTURES, SHARED_CAPTURES):
        for path in sorted(Path(str(directory)).glob("*.txt")):
            for line in path.read_text(errors="replace").splitlines():
                stripped = line.strip()
                if stripped[:1] == "[" and any(phrase in stripped for phrase in phrases):
                    seen += 1
                    assert classify_role_line(stripped) is not None, (path.name, stripped)
    assert seen >= 40  # the captures hold many; a glob that found none would prove nothing


USER_TEXT = st.lists(
    st.one_of(
        st.sampled_from(PHRASES),
        st.sampled_from(HEADERS),
        st.sampled_from(("\r", " ", "\t", "] ", "[", ": ", "slurmctld[1]: ", "error: ", "fatal: ")),
        st.text(st.characters(exclude_characters="\n"), max_size=30),
    ),
    max_size=8,
).map("".join)


@given(header=st.sampled_from(HEADERS), start=st.sampled_from(USER_TEXT_STARTS), text=USER_TEXT)
def test_any_user_text_after_a_real_message_start_says_nothing(header: str, start: str, text: str) -> None:
    assert _says_nothing(f"{header}{start}{text}")
