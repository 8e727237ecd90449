""":class:`Incidents`: what the functions use to open and resolve this project's incidents, in
OpsCenter, Incident Manager and on the topic, and to note a restore's actions on them. Its
clients are passed in (created once per container)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from hyperpod_ha.incidents.advisory_notices import REMIND_SECONDS, advisory_event_id, advisory_notice
from hyperpod_ha.incidents.incident_manager import IncidentManager
from hyperpod_ha.incidents.models import (
    NoteRequest,
    NoteResult,
    OpenRequest,
    OpenResult,
    ResolveRequest,
    ResolveResult,
)
from hyperpod_ha.incidents.noting import note_incidents
from hyperpod_ha.incidents.opening import open_incident
from hyperpod_ha.incidents.ops_center import OpsCenter
from hyperpod_ha.incidents.reminders import Reminders
from hyperpod_ha.incidents.resolving import announce_verified, resolve_incidents
from hyperpod_ha.incidents.topic import Topic
from hyperpod_ha.observability import logger
from hyperpod_ha.silences import Silences
from hyperpod_ha.topic_messages import Links
from hyperpod_ha.topic_messages.publisher import TopicPublisher

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_sns import SNSClient
    from mypy_boto3_ssm import SSMClient
    from mypy_boto3_ssm_incidents import SSMIncidentsClient

    from hyperpod_ha.incidents.settings import IncidentSettings


@dataclass(frozen=True)
class Incidents:
    ssm: SSMClient
    sns: SNSClient
    settings: IncidentSettings
    incident_manager: SSMIncidentsClient | None = None
    # The state table's client: reminders are kept there (none without it).
    dynamodb: DynamoDBClient | None = None
    clock: Callable[[], float] = time.time

    @classmethod
    def from_settings(
        cls, settings: IncidentSettings, ssm: SSMClient | None = None, sns: SNSClient | None = None
    ) -> Incidents:
        """With every client ``settings`` need (Incident Manager's only with a response plan, the
        state table's only with a table); ``ssm`` and ``sns`` when the caller has them already."""
        import boto3

        return cls(
            ssm or boto3.client("ssm"),
            sns or boto3.client("sns"),
            settings,
            incident_manager=boto3.client("ssm-incidents") if settings.response_plan_arn else None,
            dynamodb=boto3.client("dynamodb") if settings.state_table else None,
        )

    @cached_property
    def _ops_center(self) -> OpsCenter:
        return OpsCenter(self.ssm)

    @cached_property
    def _topic(self) -> Topic:
        return Topic(self.sns, self.settings.topic_arn)

    @cached_property
    def _manager(self) -> IncidentManager | None:
        # Incident Manager only with its client and a response plan.
        if self.incident_manager and self.settings.response_plan_arn:
            return IncidentManager(self.incident_manager, self.settings.response_plan_arn)
        return None

    @cached_property
    def _reminders(self) -> Reminders:
        return Reminders(self.dynamodb, self.settings.state_table, self.settings.reminder_seconds)

    @cached_property
    def _silences(self) -> Silences | None:
        # The operator's silences are kept in the state table: none without it.
        if self.dynamodb is None or not self.settings.state_table:
            return None
        return Silences(self.dynamodb, self.settings.state_table, self.clock)

    def open(self, request: OpenRequest) -> OpenResult:
        """The incident opened and told, unless a silence is in force (read now, as it opens):
        then nothing is opened or told (nor reminded of), and the result says which silence."""
        silence = self._silences.in_force(request.cluster) if self._silences else None
        if silence is not None:
            logger.info(
                "incident not opened: silenced",
                extra={"cluster": request.cluster, "kind": request.kind, "silence": silence.describe()},
            )
            return OpenResult(None, False, None, False, Links(), silenced=silence.to_json())
        return open_incident(
            request,
            self._ops_center,
            self._topic,
            self.settings.region,
            self._manager,
            self._reminders,
            self.clock(),
            stack_name=self.settings.stack_name,
        )

    def resolve(
        self, request: ResolveRequest, announce_verified: Callable[[ResolveRequest], bool] | None = None
    ) -> ResolveResult:
        """``announce_verified`` sends the "verified" message; IncidentFunction passes one made
        idempotent by Powertools, since nothing in OpsCenter records that message."""
        return resolve_incidents(
            request,
            self._ops_center,
            self._topic,
            self.settings.region,
            announce_verified or self.announce_verified,
            self.clock(),
            stack_name=self.settings.stack_name,
        )

    def note(self, request: NoteRequest) -> NoteResult:
        return note_incidents(request, self._ops_center, self.clock())

    def announce_advisories(self, cluster: str, rows: Sequence[Mapping[str, Any]]) -> list[str]:
        """A severity-4 notice per advisory row the verdict named, once per advisory and release
        (a marker in the state table); none without the topic or the table, or while a silence is
        in force (then told at the first run after it). The advisories announced now; one that
        could not be published is logged and left to the next run."""
        if not rows or not self.settings.topic_arn or self.dynamodb is None or not self.settings.state_table:
            return []
        silence = self._silences.in_force(cluster) if self._silences else None
        if silence is not None:
            logger.info("advisory notices not sent: silenced", extra={"silence": silence.describe()})
            return []
        publisher = TopicPublisher(
            self.sns, self.settings.topic_arn, self.dynamodb, self.settings.state_table, REMIND_SECONDS
        )
        told: list[str] = []
        for row in rows:
            notice = advisory_notice(cluster, self.settings.region, row)
            try:
                if publisher.publish_once(cluster, advisory_event_id(row), notice, int(self.clock())):
                    told.append(str(row["advisory"]))
            except (ClientError, BotoCoreError) as error:
                logger.warning(
                    "advisory notice not sent: the next run tries again",
                    extra={"advisory": row["advisory"], "error_type": type(error).__name__},
                )
        return told

    def announce_verified(self, request: ResolveRequest) -> bool:
        """The "verified" notice, unless a silence is in force (a notice, not a resolution: the
        "recovered" message of an incident opened before the silence still goes out)."""
        silence = self._silences.in_force(request.cluster) if self._silences else None
        if silence is not None:
            logger.info("verified notice not sent: silenced", extra={"silence": silence.describe()})
            return False
        return announce_verified(
            request, self._topic, self.settings.region, self.clock(), stack_name=self.settings.stack_name
        )
