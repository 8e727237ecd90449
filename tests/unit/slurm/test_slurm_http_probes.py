"""The probe's slurmctld_http section: Slurm's own /readyz and /livez answers, or why none."""

from __future__ import annotations

import pytest

from hyperpod_ha.slurm import HttpProbes, parse_http_probes


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("port=6817\nversion=25.11.7\nreadyz=204\nlivez=204", HttpProbes(served=True, readyz=204, livez=204)),
        ("readyz=500\nlivez=204", HttpProbes(served=True, readyz=500, livez=204)),
        (
            "served=no\nwhy=Slurm 24.11.5 serves no /readyz (added in 25.11)",
            HttpProbes(served=False, why="Slurm 24.11.5 serves no /readyz (added in 25.11)"),
        ),
        ("served=unknown\nwhy=version unknown", HttpProbes(served=None, why="version unknown")),
        (
            "readyz_error=no answer within 4 s\nlivez=204",
            HttpProbes(
                served=True, why="no answer within 4 s", readyz_error="no answer within 4 s", livez=204
            ),
        ),
        # Out of its form: unknown, never an error.
        (
            "readyz=2040\nlivez=abc",
            HttpProbes(served=None, why="not an HTTP status", readyz_error="not an HTTP status"),
        ),
        ("", HttpProbes(served=None, why="no answer recorded", readyz_error="no answer recorded")),
    ],
)
def test_the_section(text: str, expected: HttpProbes) -> None:
    assert parse_http_probes(text) == expected


def test_a_reason_from_the_node_is_bounded() -> None:
    found = parse_http_probes("readyz_error=" + "x" * 10_000)
    assert found.why is not None
    assert len(found.why) <= 240
