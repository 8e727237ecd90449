"""One section of the probe's output, read safely: why it says nothing, or its parsed text."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from hyperpod_ha.slurm import NOT_FOUND_CODE, ProbeOutput, ProbeSection, SlurmOutputError

_T = TypeVar("_T")


def failure(section: ProbeSection | None) -> str | None:
    """Why a section says nothing, or None when its output is worth parsing."""
    if section is None:
        return "not in the probe output"
    if section.ran_out_of_time:
        return f"timed out after {section.millis / 1000:.1f} s"
    if section.exit_code == NOT_FOUND_CODE:
        return "command not found on the node"
    return None


def parsed(output: ProbeOutput, name: str, parser: Callable[[str], _T]) -> _T | None:
    """The section ``name`` parsed, or None when it is missing, timed out or not parseable."""
    section = output.sections.get(name)
    if section is None or section.ran_out_of_time:
        return None
    try:
        return parser(section.text)
    except SlurmOutputError:
        return None
