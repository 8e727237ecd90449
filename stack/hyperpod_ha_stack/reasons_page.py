"""docs/reasons.md, written by ``make generate`` from :data:`hyperpod_ha.verdict.reasons.REASONS`
and :data:`hyperpod_ha.early_warning.rules.WARNINGS` (``tests/unit/verdict/test_reasons.py``
fails while it is stale): every code a verdict's reason can carry, then every code an early
warning can carry, each with its severity and what it means."""

from __future__ import annotations

from hyperpod_ha.early_warning.rules import WARNINGS
from hyperpod_ha.verdict.reasons import REASONS

_SEVERITY = {1: "1 critical", 2: "2 high", 3: "3 medium", 4: "4 low"}


def page() -> str:
    """docs/reasons.md."""
    lines = [
        "# A verdict's reasons",
        "",
        "<!-- Written by `make generate` (stack/hyperpod_ha_stack/reasons_page.py) from",
        "     hyperpod_ha.verdict.reasons.REASONS and hyperpod_ha.early_warning.rules.WARNINGS:",
        "     do not edit by hand. -->",
        "",
        "Every reason a verdict gives has a code and a text. The verdict's JSON (EvaluateVerdictFunction's",
        "output, the watchdog tick's, `hyperpod-ha check --json`) carries `reasons` (the texts on-call",
        "reads) and `reason_codes` beside them, in the same order. The codes are a contract: tests,",
        "lab checks, subscription filters and dashboards match them, never the text, which may be",
        "reworded.",
        "",
        "A code with a severity (OpsCenter's scale) is a problem: on a serving cluster it makes the",
        "verdict DEGRADED. A code without one only explains (who is active, how a standby is, what",
        "HyperPod said). A DEGRADED verdict's headline (the incident's title, the message's subject) is",
        "its most severe problem, the first of them on a tie; its `problem` field holds that reason's text.",
        "",
        "| code | severity | what it says |",
        "| --- | --- | --- |",
    ]
    for row in REASONS.values():
        severity = _SEVERITY[row.severity] if row.severity is not None else "explains"
        lines.append(f"| `{row.code.value}` | {severity} | {row.meaning} |")
    lines += [
        "",
        "## An early warning's codes",
        "",
        "The watchdog's early warnings (`controller-overloaded`, `accounting-at-risk`: docs/how-it-works.md)",
        "are not reasons: a warning never changes the verdict nor starts a run or a restore. Each",
        "warning in `warnings` (the watchdog tick's output, a verification run's verdict,",
        "`hyperpod-ha status`) carries `codes`, one per threshold its figures passed; none is also a",
        "reason's code. The severity is that of the warning's incident, which only the watchdog opens.",
        "",
        "| code | warning | severity | what it says |",
        "| --- | --- | --- | --- |",
    ]
    for warning in WARNINGS.values():
        kind = f"`{warning.kind}`"
        lines.append(
            f"| `{warning.code.value}` | {kind} | {_SEVERITY[warning.severity]} | {warning.meaning} |"
        )
    return "\n".join(lines) + "\n"


def written(_current: str) -> str:
    """What ``make generate`` writes to docs/reasons.md, whatever it held."""
    return page()
