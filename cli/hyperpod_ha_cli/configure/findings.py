"""What each source said about each deploy parameter, and the one value (or the reason there
is none) that follows from it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

# A value or reason shown to the operator: bounded, whatever a source returned.
_SHOWN_CHARS = 200


def shown(text: str) -> str:
    """``text`` cut to a length a terminal line can hold."""
    return text if len(text) <= _SHOWN_CHARS else f"{text[:_SHOWN_CHARS]}..."


@dataclass(frozen=True)
class Finding:
    """One source's answer for one parameter: a value, or ``None`` and why not."""

    parameter: str
    source: str
    value: str | None
    reason: str = ""


@dataclass(frozen=True)
class Resolved:
    """A parameter's value and where it came from (every source that agreed)."""

    parameter: str
    value: str
    source: str


@dataclass(frozen=True)
class Unresolved:
    """A parameter no source gave, or whose sources disagreed; ``reason`` says which."""

    parameter: str
    reason: str
    conflict: bool = False  # sources gave different values


def found(parameter: str, source: str, value: str) -> Finding:
    return Finding(parameter, source, value)


def not_found(parameter: str, source: str, reason: str) -> Finding:
    return Finding(parameter, source, None, shown(reason))


def resolve(findings: Iterable[Finding]) -> tuple[dict[str, Resolved], dict[str, Unresolved]]:
    """One value per parameter where the sources that have one agree; otherwise the reasons,
    never a pick between them."""
    by_parameter: dict[str, list[Finding]] = {}
    for finding in findings:
        by_parameter.setdefault(finding.parameter, []).append(finding)
    resolved: dict[str, Resolved] = {}
    unresolved: dict[str, Unresolved] = {}
    for parameter, answers in by_parameter.items():
        values = {answer.value for answer in answers if answer.value is not None}
        if len(values) == 1:
            sources = [answer.source for answer in answers if answer.value is not None]
            resolved[parameter] = Resolved(parameter, values.pop(), " and ".join(sources))
        elif values:
            said = "; ".join(f"{a.source} says {shown(a.value)}" for a in answers if a.value is not None)
            unresolved[parameter] = Unresolved(parameter, f"the sources disagree: {said}", conflict=True)
        else:
            unresolved[parameter] = Unresolved(
                parameter, "; ".join(f"{answer.source}: {answer.reason}" for answer in answers)
            )
    return resolved, unresolved
