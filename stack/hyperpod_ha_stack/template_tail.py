"""The generated end of template.yaml: alarms, dashboard, Command documents and node commands.

Everything from ``MARKER`` to the end of the file is written here from the hand-written part
above it and from the Python that describes it (``alarms``, ``dashboard``,
``command_documents``, ``documents``): one resource a line (JSON is YAML), then the
``Mappings`` holding the node scripts' command lines. ``make generate`` writes it;
tests/unit/test_template.py fails when the file differs from what this module makes.
"""

from __future__ import annotations

import json
from typing import Any

from hyperpod_ha_stack.alarms import (
    READY_STANDBYS_PERIODS,
    TOLD_ALARMS,
    alarms,
    ready_standbys_periods,
    told_alarms,
)
from hyperpod_ha_stack.command_documents import COMMAND_DOCUMENTS, command_document_resource
from hyperpod_ha_stack.dashboard import dashboard_resource
from hyperpod_ha_stack.documents import MAPPING, node_commands
from hyperpod_ha_stack.template import parse_template

MARKER = "  # ==== Generated: `make generate` writes all below (hyperpod_ha_stack.template_tail) ===="


def hand_written(template: str) -> str:
    """The part of ``template`` above the marker line."""
    head, found, _ = template.partition(MARKER + "\n")
    if not found:
        raise ValueError(f"template.yaml has no line {MARKER.strip()!r}")
    return head


def _line(logical_id: str, resource: dict[str, Any]) -> str:
    return f"  {logical_id}: {json.dumps(resource)}\n"


def tail(template: str) -> str:
    """The generated part for the hand-written part of ``template``, marker line included."""
    resources = parse_template(hand_written(template))["Resources"]
    stack_alarms = alarms(resources)
    lines = [
        MARKER + "\n",
        "  # Alarms (hyperpod_ha_stack.alarms): each function's errors and throttles, each dead-letter\n",
        "  # queue's depth, the workflows' failures and time-outs, failed rotations.\n",
        *(_line(alarm.logical_id, alarm.resource()) for alarm in stack_alarms),
        "  # The dashboard (hyperpod_ha_stack.dashboard).\n",
        _line("Dashboard", dashboard_resource(stack_alarms)),
        "  # Run Command's documents (hyperpod_ha_stack.command_documents); their commands are below.\n",
        *(_line(name, command_document_resource(name)) for name in COMMAND_DOCUMENTS),
        "\nMappings:\n",
        "  # The command line each SSM document runs on a node (hyperpod_ha_stack.documents): its script,\n",
        "  # compressed and base64-encoded.\n",
        f"  {MAPPING}:\n",
    ]
    for key, value in node_commands().items():
        lines.append(f"    {key}: {json.dumps(value)}\n")
    lines += [
        "  # NoStandbyReadyAlarm's period for each WatchdogRateMinutes (hyperpod_ha_stack.alarms).\n",
        f"  {READY_STANDBYS_PERIODS}: {json.dumps(ready_standbys_periods())}\n",
        "  # The alarms NoticeFunction tells, with the watchdog and without (hyperpod_ha_stack.alarms).\n",
        f"  {TOLD_ALARMS}: {json.dumps(told_alarms(stack_alarms))}\n",
    ]
    return "".join(lines)


def with_tail(template: str) -> str:
    return hand_written(template) + tail(template)


def in_sync(template: str) -> bool:
    return template == with_tail(template)
