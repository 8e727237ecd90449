"""Where :mod:`hyperpod_ha.ingestion.hyperpod_events` used to be; kept for the importers of these names."""

from hyperpod_ha.ingestion.hyperpod_events import (
    ALARMING_CLUSTER_STATUSES,
    CLUSTER_EVENT,
    CLUSTER_STATE,
    KNOWN_HEALTH_STATUSES,
    KNOWN_REPAIR_ACTIONS,
    MAX_EVENT_ID_CHARS,
    NODE_HEALTH,
    SOURCE,
    ClusterEvent,
    ClusterStateChange,
    EventRejected,
    HyperPodEvent,
    NodeHealthEvent,
    parse_hyperpod_event,
)

__all__ = [
    "ALARMING_CLUSTER_STATUSES",
    "CLUSTER_EVENT",
    "CLUSTER_STATE",
    "KNOWN_HEALTH_STATUSES",
    "KNOWN_REPAIR_ACTIONS",
    "MAX_EVENT_ID_CHARS",
    "NODE_HEALTH",
    "SOURCE",
    "ClusterEvent",
    "ClusterStateChange",
    "EventRejected",
    "HyperPodEvent",
    "NodeHealthEvent",
    "parse_hyperpod_event",
]
