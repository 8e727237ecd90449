"""The generated end of template.yaml: alarms, dashboard, Command documents and node commands.

Everything from ``MARKER`` to the end of the file is written here from the hand-written part
above it and from the Python that describes it (``alarms``, ``dashboard``,
``command_documents``, ``documents``): one block a resource, written as the hand-written part
is (``cfn_yaml``), then the ``Mappings``: the node scripts as text, and the alarms' tables. ``make
generate`` writes it; tests/unit/test_template.py fails when the file differs from what this
module makes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hyperpod_ha_stack.alarms import (
    READY_STANDBYS_PERIODS,
    TOLD_ALARMS,
    alarms,
    ready_standbys_periods,
    told_alarms,
)
from hyperpod_ha_stack.cfn_yaml import block
from hyperpod_ha_stack.command_documents import COMMAND_DOCUMENTS, command_document_resource
from hyperpod_ha_stack.dashboard import dashboard_resource
from hyperpod_ha_stack.documents import MAPPING, NODE_SCRIPTS, node_scripts
from hyperpod_ha_stack.template import parse_template

MARKER = "  # ==== Generated: `make generate` writes all below (hyperpod_ha_stack.template_tail) ===="


def hand_written(template: str) -> str:
    """The part of ``template`` above the marker line."""
    head, found, _ = template.partition(MARKER + "\n")
    if not found:
        raise ValueError(f"template.yaml has no line {MARKER.strip()!r}")
    return head


def _blocks(comment: str, entries: dict[str, Any]) -> Iterator[str]:
    """``comment`` (its lines), then each entry as its own block, a blank line after each."""
    yield from (f"  # {line}\n" for line in comment.splitlines())
    for key, value in entries.items():
        yield block({key: value}, 1) + "\n"


def _node_scripts() -> Iterator[str]:
    """``NodeScripts``, each script under the name of its source."""
    yield from (
        "  # The scripts the SSM documents run on a node (hyperpod_ha_stack.documents), as text: a\n",
        "  # document's command carries its script base64-encoded (Fn::Base64), decoded on the node.\n",
        f"  {MAPPING}:\n",
    )
    for key, script in node_scripts().items():
        yield f"    # {NODE_SCRIPTS[key].path}\n"
        yield block({key: script}, 2)
    yield "\n"


def tail(template: str) -> str:
    """The generated part for the hand-written part of ``template``, marker line included."""
    resources = parse_template(hand_written(template))["Resources"]
    stack_alarms = alarms(resources)
    parts = [
        MARKER + "\n",
        *_blocks(
            "Alarms (hyperpod_ha_stack.alarms): each function's errors and throttles, each dead-letter\n"
            "queue's depth, the workflows' failures and time-outs, failed rotations.",
            {alarm.logical_id: alarm.resource() for alarm in stack_alarms},
        ),
        *_blocks(
            "The dashboard (hyperpod_ha_stack.dashboard).", {"Dashboard": dashboard_resource(stack_alarms)}
        ),
        *_blocks(
            "Run Command's documents (hyperpod_ha_stack.command_documents); their commands are below.",
            {name: command_document_resource(name) for name in COMMAND_DOCUMENTS},
        ),
        "Mappings:\n",
        *_node_scripts(),
        *_blocks(
            "NoStandbyReadyAlarm's period for each WatchdogRateMinutes (hyperpod_ha_stack.alarms).",
            {READY_STANDBYS_PERIODS: ready_standbys_periods()},
        ),
        *_blocks(
            "The alarms NoticeFunction tells, with the watchdog and without (hyperpod_ha_stack.alarms).",
            {TOLD_ALARMS: told_alarms(stack_alarms)},
        ),
    ]
    return "".join(parts).removesuffix("\n")


def with_tail(template: str) -> str:
    return hand_written(template) + tail(template)


def in_sync(template: str) -> bool:
    return template == with_tail(template)
