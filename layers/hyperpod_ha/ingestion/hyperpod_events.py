"""EventBridge events HyperPod sends (``source: aws.sagemaker``), as typed values.

The full value sets of health statuses and repair actions are unconfirmed (domain.md), so
unknown values are kept as they are, never rejected.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hyperpod_ha.errors import InputRejected
from hyperpod_ha.request_fields import MAX_ID_CHARS, bounded_text

SOURCE = "aws.sagemaker"
NODE_HEALTH = "SageMaker HyperPod Cluster Node Health Event"
CLUSTER_STATE = "SageMaker HyperPod Cluster State Change"
CLUSTER_EVENT = "SageMaker HyperPod Cluster Event"

KNOWN_HEALTH_STATUSES = frozenset({"Healthy", "Unhealthy", "Unknown"})
KNOWN_REPAIR_ACTIONS = frozenset({"None", "Reboot", "Replace"})
ALARMING_CLUSTER_STATUSES = frozenset({"Failed", "RollingBack"})
# Back in service (after an update, mostly): the controllers are checked again.
IN_SERVICE = "InService"
MAX_EVENT_ID_CHARS = MAX_ID_CHARS


class EventRejected(InputRejected):
    """Not a HyperPod event this project understands. The reason is safe to log."""


@dataclass(frozen=True)
class NodeHealthEvent:
    event_id: str
    cluster_name: str
    cluster_arn: str
    instance_id: str
    health_status: str
    reason: str
    repair_action: str
    time: str = ""  # the event's own time (EventBridge ``time``)

    @property
    def healthy(self) -> bool:
        return self.health_status == "Healthy"


@dataclass(frozen=True)
class ClusterStateChange:
    event_id: str
    cluster_name: str
    cluster_arn: str
    status: str
    failure_message: str
    time: str = ""

    @property
    def alarming(self) -> bool:
        return self.status in ALARMING_CLUSTER_STATUSES

    @property
    def back_in_service(self) -> bool:
        return self.status == IN_SERVICE


@dataclass(frozen=True)
class ClusterEvent:
    event_id: str
    cluster_name: str
    cluster_arn: str
    level: str
    resource_type: str
    description: str
    group: str | None
    instance_id: str | None
    time: str = ""


HyperPodEvent = NodeHealthEvent | ClusterStateChange | ClusterEvent


def check_origin(event: object, account: str, region: str) -> None:
    """Refuse an event that did not come from this stack's own account and region (the rules
    filter on ``account`` too; this holds for a direct invoke or a misrouted event as well)."""
    if not isinstance(event, Mapping):
        raise EventRejected("event is not a JSON object")
    if event.get("account") != account:
        raise EventRejected("account is not this stack's account")
    if event.get("region") != region:
        raise EventRejected("region is not this stack's region")


def parse_hyperpod_event(event: Mapping[str, Any]) -> HyperPodEvent:
    """Turn one EventBridge event into a typed value; raise :class:`EventRejected` otherwise."""
    if not isinstance(event, Mapping):
        raise EventRejected("event is not a JSON object")
    if event.get("source") != SOURCE:
        raise EventRejected(f"source is not {SOURCE!r}")
    detail_type = event.get("detail-type")
    detail = event.get("detail")
    if not isinstance(detail, Mapping):
        raise EventRejected("detail is missing or not an object")
    event_id = _text(event, "id", "event")
    if len(event_id) > MAX_EVENT_ID_CHARS:
        # EventBridge ids are UUIDs; a longer one would be copied into every log line.
        raise EventRejected(f"event.id is longer than {MAX_EVENT_ID_CHARS} characters")
    # The event's own time, when it is text; the run's start stands in otherwise (never a reason to reject).
    time = event["time"] if isinstance(event.get("time"), str) and len(event["time"]) <= 64 else ""
    if detail_type == NODE_HEALTH:
        summary = detail.get("HealthSummary")
        if not isinstance(summary, Mapping):
            raise EventRejected("node health event has no HealthSummary object")
        return NodeHealthEvent(
            event_id=event_id,
            cluster_name=_text(detail, "ClusterName", "detail"),
            cluster_arn=_optional_text(detail, "ClusterArn"),
            instance_id=_text(detail, "InstanceId", "detail"),
            health_status=_text(summary, "HealthStatus", "HealthSummary"),
            reason=_free_text(summary, "HealthStatusReason"),
            repair_action=_optional_text(summary, "RepairAction") or "None",
            time=time,
        )
    if detail_type == CLUSTER_STATE:
        return ClusterStateChange(
            event_id=event_id,
            cluster_name=_text(detail, "ClusterName", "detail"),
            cluster_arn=_optional_text(detail, "ClusterArn"),
            status=_text(detail, "ClusterStatus", "detail"),
            failure_message=_free_text(detail, "FailureMessage"),
            time=time,
        )
    if detail_type == CLUSTER_EVENT:
        details = detail.get("EventDetails")
        if not isinstance(details, Mapping):
            raise EventRejected("cluster event has no EventDetails object")
        return ClusterEvent(
            # EventDetails.EventId is HyperPod's own id: stable across EventBridge redeliveries.
            event_id=_optional_text(details, "EventId") or event_id,
            cluster_name=_text(details, "ClusterName", "EventDetails"),
            cluster_arn=_optional_text(details, "ClusterArn"),
            level=_text(details, "EventLevel", "EventDetails"),
            resource_type=_optional_text(details, "ResourceType"),
            description=_free_text(details, "Description"),
            group=_optional_text(details, "InstanceGroupName") or None,
            instance_id=_optional_text(details, "InstanceId") or None,
            time=time,
        )
    raise EventRejected(f"detail-type {str(detail_type)[:80]!r} is not a HyperPod event")


def _text(container: Mapping[str, Any], key: str, where: str) -> str:
    value = container.get(key)
    if not isinstance(value, str) or not value.strip():
        raise EventRejected(f"{where}.{key} is missing or not a non-empty string")
    return _bounded(key, value.strip())


def _optional_text(container: Mapping[str, Any], key: str) -> str:
    """An id or a name (an instance id, a status, a group): refused when over the id bound."""
    value = container.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise EventRejected(f"{key} is not a string")
    return _bounded(key, value.strip())


def _bounded(key: str, value: str) -> str:
    if len(value) > MAX_ID_CHARS:
        raise EventRejected(f"{key} is longer than {MAX_ID_CHARS} characters")
    return value


def _free_text(container: Mapping[str, Any], key: str) -> str:
    """A message written for people: cut to a bounded excerpt, never refused for its length."""
    value = container.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise EventRejected(f"{key} is not a string")
    return bounded_text(value.strip())
