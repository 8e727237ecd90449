"""Reading the captured Slurm outputs (``hyperpod_ha_dev``'s package data) for the parser tests."""

from __future__ import annotations

import re

from hyperpod_ha_dev import CAPTURES


def capture(name: str) -> str:
    return (CAPTURES / name).read_text()


def blocks(name: str) -> list[tuple[str, int, str]]:
    """The ``=== <file>:<line> rc=<rc>`` blocks of a multi-output fixture."""
    found: list[tuple[str, int, str]] = []
    for chunk in re.split(r"^=== ", capture(name), flags=re.MULTILINE)[1:]:
        header, _, body = chunk.partition("\n")
        where, _, rc = header.partition(" rc=")
        found.append((where, int(rc), body))
    return found


def poller_outputs(name: str) -> list[tuple[int, str]]:
    """Poller lines: ``t -> t rc=N   line|line|`` -> (rc, output with newlines)."""
    found: list[tuple[int, str]] = []
    for line in capture(name).splitlines():
        match = re.fullmatch(r"\s*[0-9.]+ ->\s+[0-9.]+ rc=(\d+)\s+(.*)", line)
        assert match, line
        found.append((int(match[1]), match[2].replace("|", "\n")))
    return found
