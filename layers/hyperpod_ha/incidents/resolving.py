"""Resolving a cluster's incidents once it is well: its open OpsItems resolved and "recovered"
said once, or "verified" when nothing was open. The OpsItems' markers (which execution
resolved them, which announced it) make a retried call do nothing twice."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hyperpod_ha import console_links
from hyperpod_ha.human_time import parse_utc
from hyperpod_ha.incidents import messages
from hyperpod_ha.incidents.keys import KIND_KEY, RECOVERY_NOTIFIED_KEY, RESOLUTION_KEY, RESOLVED_BY_KEY
from hyperpod_ha.incidents.limits import bounded
from hyperpod_ha.incidents.messages import ResolvedIncident
from hyperpod_ha.incidents.models import ResolveRequest, ResolveResult
from hyperpod_ha.incidents.ops_center import OPEN, OpsCenter, data_value
from hyperpod_ha.incidents.topic import Topic
from hyperpod_ha.observability import logger
from hyperpod_ha.topic_messages import kinds


def _covered(request: ResolveRequest, summaries: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [s for s in summaries if request.covers(data_value(s.get("OperationalData"), KIND_KEY))]


def resolve_incidents(
    request: ResolveRequest,
    ops_center: OpsCenter,
    topic: Topic,
    region: str,
    announce_verified: Callable[[ResolveRequest], bool],
    now: float,
    *,
    stack_name: str | None = None,
) -> ResolveResult:
    # An earlier attempt of this same call may have resolved some already.
    earlier = _covered(
        request, ops_center.find(request.cluster, ("Resolved",), **{RESOLVED_BY_KEY: request.execution_id})
    )
    still_open = _covered(request, ops_center.find(request.cluster, OPEN))
    note = (
        f"Resolved by hyperpod-ha: verification run {request.execution_id} found cluster "
        f"{request.cluster} {request.verdict}."
    )
    for summary in still_open:
        ops_center.update(
            str(summary["OpsItemId"]),
            {
                RESOLVED_BY_KEY: {"Type": "SearchableString", "Value": bounded(request.execution_id)},
                RESOLUTION_KEY: {"Type": "String", "Value": bounded(note)},
            },
            Status="Resolved",
        )
    summaries = {str(s["OpsItemId"]): s for s in [*earlier, *still_open]}
    resolved = tuple(sorted(summaries))
    if not resolved:
        notified = announce_verified(request)
        return ResolveResult((), notified, "verified" if notified else None)
    if any(
        data_value(s.get("OperationalData"), RECOVERY_NOTIFIED_KEY) == request.execution_id for s in earlier
    ):
        return ResolveResult(resolved, True, "recovered")
    if not topic.arn:
        logger.warning("no notification topic configured; recovery not announced")
        return ResolveResult(resolved, False, None)
    partition = console_links.partition_of(request.execution_id)
    items = [
        _resolved(summaries[item], console_links.ops_item_console_url(item, region, partition))
        for item in resolved
    ]
    link = console_links.execution_console_url(request.execution_id, region)
    for recovery in messages.recovered(request, items, link, region, now, stack_name=stack_name):
        topic.publish(recovery)
    for ops_item in resolved:
        ops_center.update(
            ops_item,
            {RECOVERY_NOTIFIED_KEY: {"Type": "SearchableString", "Value": bounded(request.execution_id)}},
        )
    logger.info("incidents resolved", extra={"cluster": request.cluster, "resolved": list(resolved)})
    return ResolveResult(resolved, True, "recovered")


def _resolved(summary: Mapping[str, Any], link: str) -> ResolvedIncident:
    kind = data_value(summary.get("OperationalData"), KIND_KEY) or "unknown"
    severity = str(summary.get("Severity") or "")
    return ResolvedIncident(
        ops_item_id=str(summary["OpsItemId"]),
        kind=kind,
        severity=severity if severity in kinds.SEVERITIES else kinds.severity_of(kind),
        link=link,
        opened_at=parse_utc(summary.get("CreatedTime")),
    )


def announce_verified(
    request: ResolveRequest, topic: Topic, region: str, now: float, *, stack_name: str | None = None
) -> bool:
    """Publish the short "verified" message; not idempotent by itself (nothing in OpsCenter records it)."""
    if not topic.arn:
        return False
    link = console_links.execution_console_url(request.execution_id, region)
    topic.publish(messages.verified(request, link, region, now, stack_name=stack_name))
    return True
