"""The parameter table of docs/deploying.md is template.yaml's parameters: one row per parameter,
no row without one, the required ones (no Default) marked **required**, every other default as
the template gives it; the README's table of required parameters names exactly those."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hyperpod_ha_stack.template import load_template

ROOT = Path(__file__).resolve().parents[2]
REQUIRED = "**required**"


def table_rows(text: str, heading: str) -> list[list[str]]:
    """The cells of the first table after ``heading``, without its header and rule."""
    after = text[text.index(heading) :]
    lines = after.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("|"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.lstrip().startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
    return rows


def named(cell: str) -> str:
    match = re.fullmatch(r"`([A-Za-z0-9]+)`", cell)
    assert match, f"{cell!r} is not one parameter in backticks"
    return match.group(1)


def shown_default(parameter: dict[str, Any]) -> str:
    if "Default" not in parameter:
        return REQUIRED
    default = parameter["Default"]
    return "empty" if default == "" else f"`{default}`"


def mismatches(rows: list[list[str]], parameters: dict[str, dict[str, Any]]) -> list[str]:
    found: list[str] = []
    documented = [named(row[0]) for row in rows]
    found += [f"{name}: no row" for name in parameters if name not in documented]
    found += [f"{name}: not a parameter" for name in documented if name not in parameters]
    found += [f"{name}: two rows" for name in set(documented) if documented.count(name) > 1]
    for row in rows:
        name = named(row[0])
        if name in parameters and row[1] != shown_default(parameters[name]):
            found.append(f"{name}: default {row[1]}, template {shown_default(parameters[name])}")
    return sorted(found)


def test_the_parameter_table_is_the_templates_parameters() -> None:
    parameters = load_template(ROOT / "template.yaml")["Parameters"]
    rows = table_rows((ROOT / "docs" / "deploying.md").read_text(), "## Parameters")
    assert mismatches(rows, parameters) == []


def test_the_readme_lists_exactly_the_required_parameters() -> None:
    parameters = load_template(ROOT / "template.yaml")["Parameters"]
    required = [name for name, parameter in parameters.items() if "Default" not in parameter]
    assert required
    rows = table_rows((ROOT / "README.md").read_text(), "The required ones:")
    assert [named(row[0]) for row in rows] == required


def test_a_missing_wrong_or_stray_row_is_found() -> None:
    parameters = {"ClusterName": {"Type": "String"}, "LogLevel": {"Type": "String", "Default": "INFO"}}
    rows = [["`ClusterName`", "`x`", "..."], ["`Stray`", "empty", "..."]]
    assert mismatches(rows, parameters) == [
        "ClusterName: default `x`, template **required**",
        "LogLevel: no row",
        "Stray: not a parameter",
    ]
