"""The notices of HyperPod's events: what HyperPodEventFunction tells people without a run (many
workers unhealthy at once, the cluster Failed or RollingBack, an accounting database change
HyperPod reverted or had nothing to revert). Pure: the event, the clock and the region are
passed in; the form is :mod:`hyperpod_ha.topic_messages`'."""

from __future__ import annotations

from hyperpod_ha import console_links
from hyperpod_ha.human_time import duration, parse_utc, utc_minute
from hyperpod_ha.ingestion.cluster_event_metadata import DatabaseConfiguration
from hyperpod_ha.ingestion.hyperpod_events import (
    ClusterEvent,
    ClusterStateChange,
    HyperPodEvent,
    NodeHealthEvent,
)
from hyperpod_ha.topic_messages import TopicMessage, kinds, message
from hyperpod_ha.topic_messages.sections import facts, next_steps, when


def _event_line(event: HyperPodEvent, now: float) -> str:
    """``<id>, 1 min ago (2026-12-01 10:03 UTC)``: HyperPod's event and its own time."""
    at = when(parse_utc(event.time), now)
    return f"{event.event_id}, {at}" if at else event.event_id


def _steps(
    event: HyperPodEvent, region: str, stack_name: str | None, kind: str, look_at: tuple[str, ...] = ()
) -> list[str]:
    link = console_links.cluster_console_url(
        event.cluster_name, region, console_links.partition_of(event.cluster_arn)
    )
    looks = (*kinds.kind(kind).look_at, *look_at)
    links = [("HyperPod cluster", link)]
    return next_steps(event.cluster_name, region, (), looks, links, diagnose=False, stack_name=stack_name)


def workers_unhealthy(
    event: NodeHealthEvent,
    unhealthy: int,
    window_start: int,
    window_seconds: int,
    region: str,
    now: float,
    *,
    stack_name: str | None = None,
) -> TopicMessage:
    """More unhealthy workers within one window than the threshold: one notice per window."""
    window = duration(window_seconds)
    body = [
        f"{unhealthy} worker nodes of HyperPod cluster {event.cluster_name} reported unhealthy "
        f"within {window}.",
        "",
        *facts(
            [
                ("Cluster", event.cluster_name),
                ("Window", f"{window} from {when(window_start, now)}"),
                ("Detected", utc_minute(now)),
                (
                    "Latest",
                    f"{event.instance_id} ({event.health_status}, repair action {event.repair_action})",
                ),
                ("Its reason", event.reason or "(none given)"),
                ("Event", _event_line(event, now)),
            ]
        ),
        "",
        "Further unhealthy workers in this window are counted without another notice.",
        "",
        *_steps(event, region, stack_name, "workers-unhealthy"),
    ]
    return message(
        cluster=event.cluster_name,
        kind="workers-unhealthy",
        event="notice",
        what=f"{unhealthy} worker nodes unhealthy within {window}",
        body=body,
    )


def cluster_status(
    event: ClusterStateChange, region: str, now: float, *, stack_name: str | None = None
) -> TopicMessage:
    """HyperPod reports the cluster Failed or RollingBack."""
    body = [
        f"HyperPod cluster {event.cluster_name} changed status to {event.status}.",
        "",
        *facts(
            [
                ("Cluster", event.cluster_name),
                ("Status", event.status),
                ("Failure", event.failure_message or "(none given)"),
                ("Event", _event_line(event, now)),
            ]
        ),
        "",
        *_steps(event, region, stack_name, "cluster-status"),
    ]
    return message(
        cluster=event.cluster_name,
        kind="cluster-status",
        event="notice",
        what=f"cluster status {event.status}",
        body=body,
    )


def accounting_database_change(
    event: ClusterEvent,
    database: DatabaseConfiguration,
    outcome: str,
    region: str,
    now: float,
    *,
    stack_name: str | None = None,
) -> TopicMessage:
    """HyperPod changed the external accounting database configuration and reverted it (or had
    nothing to revert); a change it could not revert is an incident instead."""
    body = [
        f"HyperPod reported a change of HyperPod cluster {event.cluster_name}'s external accounting "
        f"database configuration: {outcome} (rollback status {database.rollback_status}).",
        "",
        *facts(
            [
                ("Cluster", event.cluster_name),
                ("Rollback", database.rollback_status),
                ("Advisory", database.advisory or "(none)"),
                ("Failure", database.failure_message or "(none)"),
                ("Event", f"{_event_line(event, now)} (level {event.level})"),
            ]
        ),
        "",
        *_steps(event, region, stack_name, "accounting-database-change", ("HyperPod's advisory above",)),
    ]
    return message(
        cluster=event.cluster_name,
        kind="accounting-database-change",
        event="notice",
        what=f"accounting database change {outcome}",
        body=body,
    )
