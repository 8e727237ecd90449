"""``make generate``: write every generated part of the repository from its description.

The generated end of template.yaml (``template_tail``: alarms, dashboard, Run Command documents,
node commands), the state machines' "Check the settings" states (``settings_checks``), the
sample of every message on the notification topic (docs/messages.md, ``messages_page``) and the
template's parameters for the installed command's ``configure`` (no template.yaml beside it). With
``--check`` nothing is written and the exit status says whether everything is current.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path

from hyperpod_ha_stack import messages_page
from hyperpod_ha_stack.settings_checks import SETTINGS_CHECKS
from hyperpod_ha_stack.template import load_template
from hyperpod_ha_stack.template_tail import with_tail


def generated_files(root: Path) -> dict[Path, Callable[[str], str]]:
    """Each generated file under ``root`` and what makes it current from its present text."""
    files: dict[Path, Callable[[str], str]] = {root / "template.yaml": with_tail}
    for check in SETTINGS_CHECKS:
        files[root / "statemachine" / check.definition] = check.written
    files[root / "docs" / "messages.md"] = messages_page.written
    files[root / "cli" / "hyperpod_ha_cli" / "configure" / "template_parameters.json"] = functools.partial(
        _parameters_json, root / "template.yaml"
    )
    return files


def _parameters_json(template: Path, _present: str) -> str:
    """template.yaml's Parameters section as JSON, in the template's order."""
    parameters = load_template(template).get("Parameters", {})
    return json.dumps(parameters, indent=1, sort_keys=False) + "\n"


def _text(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def stale(root: Path) -> list[Path]:
    files = generated_files(root).items()
    return [path for path, make in files if make(_text(path)) != _text(path)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the checkout (default: here)")
    parser.add_argument("--check", action="store_true", help="only say which files are not current")
    arguments = parser.parse_args()
    if arguments.check:
        out_of_date = stale(arguments.root)
        for path in out_of_date:
            print(f"{path} is not current: run `make generate`", file=sys.stderr)
        sys.exit(1 if out_of_date else 0)
    for path, make in generated_files(arguments.root).items():
        path.parent.mkdir(exist_ok=True)
        path.write_text(make(_text(path)))


if __name__ == "__main__":
    main()
