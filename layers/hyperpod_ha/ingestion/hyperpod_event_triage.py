"""What one HyperPod EventBridge event means for this cluster: a verification run for a
controller, a count (and at most one notice per window) for unhealthy workers, a notice for a
cluster that failed, a verification run for a cluster back in service (after an update); a
cluster event's metadata (slurmdbd health, the accounting database) is triaged by
:mod:`~hyperpod_ha.ingestion.event_metadata_triage` at any level."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hyperpod_ha.human_time import utc_text
from hyperpod_ha.ingestion import hyperpod_notices
from hyperpod_ha.ingestion.cluster_event_metadata import metadata_of
from hyperpod_ha.ingestion.event_metadata_triage import EventMetadataTriage
from hyperpod_ha.ingestion.hyperpod_events import (
    KNOWN_HEALTH_STATUSES,
    KNOWN_REPAIR_ACTIONS,
    ClusterEvent,
    ClusterStateChange,
    EventRejected,
    HyperPodEvent,
    NodeHealthEvent,
    check_origin,
    parse_hyperpod_event,
)
from hyperpod_ha.ingestion.rejected_inputs import RejectedInputs
from hyperpod_ha.ingestion.worker_failures import WorkerFailures
from hyperpod_ha.observability import logger
from hyperpod_ha.runs.verification_runs import RunRequestRejected, VerificationRuns
from hyperpod_ha.topic_messages.publisher import TopicPublisher
from hyperpod_ha.trigger import Trigger


@dataclass(frozen=True)
class HyperPodEventTriage:
    """Decides what one HyperPod EventBridge event means for this cluster."""

    cluster: str
    controller_group: str
    runs: VerificationRuns
    workers: WorkerFailures
    publisher: TopicPublisher
    group_of_instance: Callable[[str, str], str | None]
    clock: Callable[[], float]
    # The stack's own account and region: events from elsewhere are refused.
    account: str
    region: str
    # None: metadata is not read (callers without SageMaker's DescribeClusterEvent or IncidentFunction).
    metadata: EventMetadataTriage | None = None
    stack_name: str | None = None  # for the commands a notice prints

    def handle(self, event: Mapping[str, Any], rejected: RejectedInputs) -> dict[str, Any]:
        raw_id = event.get("id") if isinstance(event, Mapping) else None
        event_id = raw_id[:256] if isinstance(raw_id, str) else ""
        try:
            check_origin(event, self.account, self.region)
            parsed = parse_hyperpod_event(event)
        except EventRejected as error:
            rejected.keep("eventbridge", event_id, str(error), event)
            return {"event_id": event_id, "outcome": "rejected", "reason": str(error)}
        if parsed.cluster_name != self.cluster:
            return self._result(
                parsed, "ignored", reason=f"event for another cluster ({parsed.cluster_name})"
            )
        try:
            if isinstance(parsed, NodeHealthEvent):
                return self._node_health(parsed)
            if isinstance(parsed, ClusterStateChange):
                return self._cluster_state(parsed)
            return self._any_cluster_event(parsed, event, event_id, rejected)
        except RunRequestRejected as error:  # a trigger over its bounds: kept, nothing started
            rejected.keep("eventbridge", event_id, str(error), event)
            return {"event_id": event_id, "outcome": "rejected", "reason": str(error)}

    def _any_cluster_event(
        self, parsed: ClusterEvent, event: Mapping[str, Any], event_id: str, rejected: RejectedInputs
    ) -> dict[str, Any]:
        """The metadata's meaning first (any level), else the level-based triage."""
        try:
            metadata = metadata_of(event["detail"]["EventDetails"])
            handled = None
            if metadata is not None and self.metadata is not None:
                # The record read again from SageMaker is outside input too: a bad one is a reject.
                complete = self.metadata.complete(parsed, metadata)
                handled = self.metadata.handle(parsed, complete, self._verify, self._result)
        except EventRejected as error:
            rejected.keep("eventbridge", event_id, str(error), event)
            return {"event_id": event_id, "outcome": "rejected", "reason": str(error)}
        return handled if handled is not None else self._cluster_event(parsed)

    def _node_health(self, event: NodeHealthEvent) -> dict[str, Any]:
        if event.health_status not in KNOWN_HEALTH_STATUSES:
            logger.info("unknown HealthStatus accepted", extra={"health_status": event.health_status})
        if event.repair_action not in KNOWN_REPAIR_ACTIONS:
            logger.info("unknown RepairAction accepted", extra={"repair_action": event.repair_action})
        if event.healthy:
            return self._result(event, "ignored", reason="node reported healthy")
        group = self.group_of_instance(event.cluster_name, event.instance_id)
        if group is None:
            return self._result(event, "ignored", reason="node is no longer in the cluster")
        if group == self.controller_group:
            reason = f"controller {event.instance_id} reported {event.health_status}: {event.reason}".strip(
                ": "
            )
            return self._verify(
                event, reason, {"instance_id": event.instance_id, "health": event.health_status}
            )
        tally = self.workers.record_unhealthy(event.cluster_name, event.instance_id)
        if tally.outcome != "threshold-crossed":
            return self._result(event, "counted", unhealthy_workers=tally.unhealthy, group=group)
        message = hyperpod_notices.workers_unhealthy(
            event,
            tally.unhealthy,
            tally.window_start,
            self.workers.policy.window_seconds,
            self.region,
            self.clock(),
            stack_name=self.stack_name,
        )
        if (silence := self.publisher.silenced(event.cluster_name)) is not None:
            # Counted all the same: a threshold crossed in the window is not crossed again after it.
            return self._result(
                event, "silenced", unhealthy_workers=tally.unhealthy, silenced=silence.to_json()
            )
        try:
            self.publisher.publish(message)
        except Exception:
            self.workers.forget(event.cluster_name, tally.window_start, event.instance_id)
            raise
        return self._result(event, "notified", unhealthy_workers=tally.unhealthy, group=group)

    def _cluster_state(self, event: ClusterStateChange) -> dict[str, Any]:
        if event.back_in_service:
            # The event does not say what came before: every return to service is checked (an
            # update's ON/OFF burst has joined the run waiting for it, if one still waits).
            reason = "cluster status InService (an update or a change has ended)"
            return self._verify(event, reason, {"status": event.status})
        if not event.alarming:
            return self._result(event, "ignored", reason=f"cluster status {event.status}")
        message = hyperpod_notices.cluster_status(
            event, self.region, self.clock(), stack_name=self.stack_name
        )
        if (silence := self.publisher.silenced(event.cluster_name)) is not None:
            return self._result(event, "silenced", silenced=silence.to_json())
        sent = self.publisher.publish_once(event.cluster_name, event.event_id, message, int(self.clock()))
        return self._result(event, "notified" if sent else "duplicate")

    def _cluster_event(self, event: ClusterEvent) -> dict[str, Any]:
        if event.level != "Error":
            return self._result(event, "ignored", reason=f"event level {event.level}")
        group = event.group
        if group is None and event.instance_id:
            group = self.group_of_instance(event.cluster_name, event.instance_id)
        if group != self.controller_group:
            return self._result(event, "ignored", reason="error outside the controller group")
        reason = f"cluster event on the controller group: {event.description}".strip(": ")
        return self._verify(
            event, reason, {"instance_id": event.instance_id, "description": event.description}
        )

    def _verify(self, event: HyperPodEvent, reason: str, summary: dict[str, Any]) -> dict[str, Any]:
        trigger = Trigger(
            source="eventbridge",
            id=event.event_id,
            summary={"kind": type(event).__name__, **summary},
            time=utc_text(event.time),
        )
        decision = self.runs.start_or_join(event.cluster_name, trigger, reason)
        return self._result(event, decision.outcome, execution_arn=decision.execution_arn)

    @staticmethod
    def _result(event: HyperPodEvent, outcome: str, **more: Any) -> dict[str, Any]:
        result = {"event_id": event.event_id, "kind": type(event).__name__, "outcome": outcome, **more}
        logger.info("hyperpod event handled", extra=result)
        return result
