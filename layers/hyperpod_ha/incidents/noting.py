"""Noting on a cluster's open incidents what a restore of redundancy did: one entry per
execution, ``{"at", "execution", "lines"}``, in a JSON list under ``RESTORE_ACTIONS_KEY``, the
oldest dropped first so the value stays within OpsCenter's limit. A retried call (the same
execution) adds nothing. One restore runs at a time per cluster (the lease), so reading the
list and writing it back races with no other writer of ours."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from hyperpod_ha.errors import HyperpodHaError
from hyperpod_ha.human_time import iso_utc
from hyperpod_ha.incidents.keys import KIND_KEY, RESTORE_ACTIONS_KEY
from hyperpod_ha.incidents.limits import OPERATIONAL_DATA_VALUE_LIMIT
from hyperpod_ha.incidents.models import NoteRequest, NoteResult
from hyperpod_ha.incidents.ops_center import OPEN, OpsCenter, data_value
from hyperpod_ha.incidents.ops_item import as_json
from hyperpod_ha.json_input import load_json
from hyperpod_ha.observability import logger

_CUT: Final = "[more lines in the execution's history: cut by hyperpod-ha to OpsCenter's limit]"


class _NotOurList(HyperpodHaError):
    """The value under RESTORE_ACTIONS_KEY is not the JSON list this module writes."""


def note_incidents(request: NoteRequest, ops_center: OpsCenter, now: float) -> NoteResult:
    noted: list[str] = []
    for summary in ops_center.find(request.cluster, OPEN):
        if data_value(summary.get("OperationalData"), KIND_KEY) not in request.kinds:
            continue
        ops_item_id = str(summary["OpsItemId"])
        # A summary need not carry the String values: the OpsItem itself has the list so far.
        entries = _entries(ops_center.get(ops_item_id).get("OperationalData"), ops_item_id)
        if not any(entry.get("execution") == request.execution_id for entry in entries):
            entry = {"at": iso_utc(now), "execution": request.execution_id, "lines": list(request.lines)}
            value = fitted([*entries, entry])
            ops_center.update(ops_item_id, {RESTORE_ACTIONS_KEY: {"Type": "String", "Value": value}})
        noted.append(ops_item_id)
    logger.info("restore noted on the open incidents", extra={"cluster": request.cluster, "noted": noted})
    return NoteResult(tuple(sorted(noted)))


def _entries(data: Mapping[str, Any] | None, ops_item_id: str) -> list[dict[str, Any]]:
    """The entries written so far; none when someone replaced the value by hand (it is then
    overwritten: the executions' histories keep every restore)."""
    value = data_value(data, RESTORE_ACTIONS_KEY)
    if value is None:
        return []
    try:
        decoded = load_json(value, _NotOurList, what=RESTORE_ACTIONS_KEY)
    except _NotOurList:
        decoded = None
    if not isinstance(decoded, list):
        logger.warning("restore notes not a JSON list: started again", extra={"ops_item": ops_item_id})
        return []
    return [entry for entry in decoded if isinstance(entry, dict)]


def _size(entries: list[dict[str, Any]]) -> int:
    return len(as_json(entries).encode("utf-8"))


def fitted(entries: list[dict[str, Any]], limit: int = OPERATIONAL_DATA_VALUE_LIMIT) -> str:
    """``entries`` as JSON within ``limit`` bytes: the oldest dropped first; the newest, when too
    large alone, keeps its first lines and says the rest were cut."""
    kept = list(entries)
    while len(kept) > 1 and _size(kept) > limit:
        kept.pop(0)
    if kept and _size(kept) > limit:
        newest = kept[0]
        lines = list(newest.get("lines") or [])
        while lines and _size([{**newest, "lines": [*lines, _CUT]}]) > limit:
            lines.pop()
        kept = [{**newest, "lines": [*lines, _CUT]}]
    return as_json(kept)
