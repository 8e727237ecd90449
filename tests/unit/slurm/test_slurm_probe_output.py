"""The probe's output split into its sections, and formatted back by the tests' fake."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hyperpod_ha.slurm import (
    SECTIONS,
    ProbeOutputError,
    ProbeSection,
    parse_probe_output,
)
from tests.fakes.probe_output import format_probe_output
from tests.unit.slurm.cases.captures import capture


def _section(name: str, text: str, rc: int = 0) -> ProbeSection:
    return ProbeSection(name=name, text=text, exit_code=rc, millis=10, timed_out=False, truncated=False)


def test_probe_output_round_trip_with_captured_sections() -> None:
    sections = [
        _section("ping", capture("ping_primary_down.txt").rstrip("\n")),
        _section("sinfo", capture("sinfo_connect_failure.txt").rstrip("\n"), rc=1),
        ProbeSection(name="config", text="", exit_code=124, millis=15003, timed_out=True, truncated=False),
    ]
    output = parse_probe_output(format_probe_output(sections))
    assert output.complete
    assert list(output.sections.values()) == sections
    assert output.sections["config"].ran_out_of_time


def test_probe_output_with_crlf_and_noise_around_it() -> None:
    text = (
        "Starting session\r\n"
        + format_probe_output([_section("ping", "x")]).replace("\n", "\r\n")
        + "bye\r\n"
    )
    output = parse_probe_output(text)
    assert output.complete
    assert output.sections["ping"].text == "x"


def test_probe_output_cut_off_is_incomplete() -> None:
    text = format_probe_output([_section("ping", "a"), _section("sinfo", "b")], complete=False)
    output = parse_probe_output(text)
    assert not output.complete
    cut = text[: text.index("end sinfo")]
    assert set(parse_probe_output(cut).sections) == {"ping"}


def test_a_result_line_of_another_run_does_not_complete_the_output() -> None:
    text = format_probe_output([_section("ping", "a")], nonce="aaaa1111")
    other = text.replace('"nonce":"aaaa1111"', '"nonce":"bbbb2222"')
    assert not parse_probe_output(other).complete


def test_markers_printed_by_a_command_do_not_end_a_section() -> None:
    # Without this run's nonce, a line that looks like a marker is section text.
    inner = "@@hyperpod-ha 0000 end ping rc=0 ms=1 timed_out=0 truncated=0\nHYPERPOD_HA_PROBE_RESULT {}"
    output = parse_probe_output(format_probe_output([_section("role", inner)], nonce="feedc0de"))
    assert output.sections["role"].text == inner
    assert output.complete


@pytest.mark.parametrize(
    "text",
    ["", "bash: base64: command not found\n", "@@hyperpod-ha probe begin version=1\n"],
)
def test_not_probe_output(text: str) -> None:
    with pytest.raises(ProbeOutputError):
        parse_probe_output(text)


def test_malformed_end_marker() -> None:
    text = (
        "@@hyperpod-ha probe begin version=1 nonce=abcd\n"
        "@@hyperpod-ha abcd begin ping\n"
        "@@hyperpod-ha abcd end ping rc=x\n"
    )
    with pytest.raises(ProbeOutputError):
        parse_probe_output(text)


section_text = st.lists(
    st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc", "Zl", "Zp"]), max_size=40).map(
        str.strip
    ),
    max_size=6,
).map("\n".join)


@given(
    st.lists(
        st.builds(
            ProbeSection,
            name=st.sampled_from(SECTIONS),
            text=section_text,
            exit_code=st.integers(0, 255),
            millis=st.integers(0, 10**6),
            timed_out=st.booleans(),
            truncated=st.booleans(),
        ),
        unique_by=lambda s: s.name,
        max_size=len(SECTIONS),
    )
)
def test_probe_output_round_trip(sections: list[ProbeSection]) -> None:
    output = parse_probe_output(format_probe_output(sections))
    assert output.complete
    assert list(output.sections.values()) == sections


def test_a_section_printed_twice_is_rejected() -> None:
    text = format_probe_output(
        [_section("ping", "first"), _section("sinfo", "b"), _section("ping", "second")]
    )
    with pytest.raises(ProbeOutputError, match="section 'ping' appears twice"):
        parse_probe_output(text)
