"""The commands the stack's Session documents run, kept in ``template.yaml`` by this module.

CloudFormation cannot read a file, so the probe (and the slurmdbd roll-out) travel in the
template as one command line each. ``python -m hyperpod_ha_dev.documents --write template.yaml``
(``make probe-document``) writes them; a test fails when they differ.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from pathlib import Path

from hyperpod_ha.drill.node import accounting_command, jobs_command, takeover_command
from hyperpod_ha.probe import probe_command


def _rollout_command() -> str:
    from hyperpod_ha.rotation.rollout_document import node_command

    return node_command()


# Session document logical id -> the command its properties.linux.commands must hold.
DOCUMENT_COMMANDS: dict[str, Callable[[], str]] = {
    "ControllerProbeDocument": probe_command,
    "SlurmdbdRolloutDocument": _rollout_command,
    "FailoverDrillTakeoverDocument": takeover_command,
    "FailoverDrillJobsDocument": jobs_command,
    "FailoverDrillAccountingDocument": accounting_command,
}

_COMMANDS_LINE = re.compile(r"^(?P<indent>\s+)commands: (?P<value>.*)$", re.MULTILINE)


def _yaml_string(command: str) -> str:
    # Single-quoted YAML: nothing is special inside but the quote itself.
    return "'" + command.replace("'", "''") + "'"


def documents_in_sync(template: str) -> dict[str, bool]:
    return {
        name: _section_command(template, name) == _yaml_string(build())
        for name, build in DOCUMENT_COMMANDS.items()
    }


def resource_line(template: str, logical_id: str, line: re.Pattern[str]) -> re.Match[str]:
    """The first match of ``line`` inside the template's resource ``logical_id``."""
    start = template.index(f"\n  {logical_id}:\n")
    following = re.search(r"\n  [A-Za-z0-9]+:\n", template[start + 1 :])
    end = start + 1 + following.start() if following else len(template)
    found = line.search(template, start, end)
    if found is None:
        raise ValueError(f"{logical_id} in template.yaml has no line matching {line.pattern!r}")
    return found


def _section_command(template: str, logical_id: str) -> str:
    return resource_line(template, logical_id, _COMMANDS_LINE)["value"]


def replace_resource_lines(template: str, values: dict[str, str], line: re.Pattern[str]) -> str:
    """``template`` with the ``value`` group of ``line`` in each resource of ``values`` replaced."""
    for logical_id, value in values.items():
        found = resource_line(template, logical_id, line)
        template = template[: found.start("value")] + value + template[found.end("value") :]
    return template


def write_commands(template: str) -> str:
    values = {name: _yaml_string(build()) for name, build in DOCUMENT_COMMANDS.items()}
    return replace_resource_lines(template, values, _COMMANDS_LINE)


def rewrite_template(write: Callable[[str], str], description: str | None) -> None:
    """The writers' command line: ``--write template.yaml`` rewrites it in place."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--write", type=Path, required=True, help="the template to update")
    path = parser.parse_args().write
    path.write_text(write(path.read_text()))


def main() -> None:
    rewrite_template(write_commands, __doc__)


if __name__ == "__main__":
    main()
