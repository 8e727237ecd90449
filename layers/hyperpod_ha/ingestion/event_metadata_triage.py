"""What a cluster event's metadata means, at any EventLevel (slurmdbd health comes as Warn or
Info): slurmdbd Unhealthy or Healthy again -> a verification run carrying HyperPod's words;
an accounting database change not reverted -> an incident of its own kind; reverted or not
applicable -> a notice. Events without such metadata go on to the level-based triage."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hyperpod_ha.ingestion import hyperpod_notices
from hyperpod_ha.ingestion.cluster_event_metadata import (
    KNOWN_ROLLBACK_STATUSES,
    KNOWN_SLURM_HEALTH_REASONS,
    KNOWN_SLURM_HEALTH_STATUSES,
    DatabaseConfiguration,
    EventMetadata,
    SlurmHealth,
)
from hyperpod_ha.ingestion.database_incidents import revert_failed_request
from hyperpod_ha.ingestion.hyperpod_events import ClusterEvent
from hyperpod_ha.observability import logger
from hyperpod_ha.topic_messages.publisher import TopicPublisher

# (event, reason, trigger summary) -> the triage's result
Verify = Callable[[ClusterEvent, str, dict[str, Any]], dict[str, Any]]
Result = Callable[..., dict[str, Any]]


@dataclass(frozen=True)
class EventMetadataTriage:
    publisher: TopicPublisher
    # (cluster, HyperPod's event id) -> the record's metadata (DescribeClusterEvent)
    read_again: Callable[[str, str], EventMetadata | None]
    open_incident: Callable[[dict[str, Any]], dict[str, Any]]
    clock: Callable[[], float]
    region: str = ""  # for the console links of a notice
    stack_name: str | None = None  # for the commands a notice prints

    def complete(self, event: ClusterEvent, metadata: EventMetadata) -> EventMetadata:
        """The envelope's metadata, or the record's when the envelope's is null or partial."""
        if metadata.complete:
            return metadata
        record = self.read_again(event.cluster_name, event.event_id)
        logger.info(
            "cluster event metadata read again",
            extra={"event_id": event.event_id, "found": record is not None and record.relevant},
        )
        return record if record is not None else metadata

    def handle(
        self, event: ClusterEvent, metadata: EventMetadata, verify: Verify, result: Result
    ) -> dict[str, Any] | None:
        """The result, or ``None`` when the metadata is of no kind this project acts on."""
        if metadata.slurm_health is not None:
            return self._slurm_health(event, metadata.slurm_health, verify, result)
        if metadata.database is not None:
            return self._database(event, metadata.database, result)
        return None

    @staticmethod
    def _slurm_health(
        event: ClusterEvent, health: SlurmHealth, verify: Verify, result: Result
    ) -> dict[str, Any]:
        if health.status not in KNOWN_SLURM_HEALTH_STATUSES:
            logger.info("unknown SlurmHealth status accepted", extra={"status": health.status})
        if health.reason and health.reason not in KNOWN_SLURM_HEALTH_REASONS:
            logger.info("unknown SlurmHealth reason accepted", extra={"slurm_reason": health.reason})
        if not (health.unhealthy or health.healthy):
            return result(event, "ignored", reason=f"slurm health status {health.status}")
        reported = health.describe()
        summary = {
            # Flat texts: a run's trigger summary holds texts and numbers only (runs.verification_runs).
            "slurm_health_component": health.component,
            "slurm_health_status": health.status,
            "slurm_health_reason": health.reason,
            # Read by EvaluateVerdictFunction: HyperPod's words among the verdict's reasons.
            "reported": reported,
        }
        # Healthy again: a run that can find the cluster well and resolve the incident.
        return verify(event, f"{reported} (event level {event.level})", summary)

    def _database(
        self, event: ClusterEvent, database: DatabaseConfiguration, result: Result
    ) -> dict[str, Any]:
        status = database.rollback_status
        if status not in KNOWN_ROLLBACK_STATUSES:
            logger.info("unknown RollbackStatus accepted", extra={"rollback_status": status})
            return result(event, "ignored", reason=f"rollback status {status}")
        if database.revert_failed:
            opened = self.open_incident(
                revert_failed_request(event.cluster_name, event.event_id, database, event.time)
            )
            return result(
                event,
                "incident-opened",
                ops_item_id=opened.get("ops_item_id"),
                ops_item_created=opened.get("created"),
            )
        outcome = "reverted" if status == "Reverted" else "not applicable"
        message = hyperpod_notices.accounting_database_change(
            event, database, outcome, self.region, self.clock(), stack_name=self.stack_name
        )
        if (silence := self.publisher.silenced(event.cluster_name)) is not None:
            return result(event, "silenced", rollback_status=status, silenced=silence.to_json())
        sent = self.publisher.publish_once(event.cluster_name, event.event_id, message, int(self.clock()))
        return result(event, "notified" if sent else "duplicate", rollback_status=status)
