"""IncidentFunction's service: ``{"action": "open" | "resolve", ...}`` handled, counted on the
dashboard, and the run's verdict kept for ``hyperpod-ha status``."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

import boto3

from hyperpod_ha.incidents.adapter import Incidents
from hyperpod_ha.incidents.errors import InvalidIncidentRequest
from hyperpod_ha.incidents.models import OpenRequest, ResolveRequest
from hyperpod_ha.incidents.verified_once import announce_verified_once, idempotency_config
from hyperpod_ha.observability import logger, metrics
from hyperpod_ha.request_fields import bounded_text
from hyperpod_ha.status_records import StatusRecords, accounting_record, verdict_metric

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from hyperpod_ha.incidents.settings import IncidentFunctionSettings

_Request = TypeVar("_Request", OpenRequest, ResolveRequest)


class IncidentService:
    def __init__(
        self,
        incidents: Incidents,
        idempotency_table: str | None,
        status: StatusRecords | None,
        cluster: str = "",
    ) -> None:
        self.incidents = incidents
        self._table = idempotency_table
        self._status = status
        self._cluster = cluster

    @classmethod
    def from_settings(cls, settings: IncidentFunctionSettings) -> IncidentService:
        """The service with its clients: Incident Manager's only when a response plan is set."""
        incidents = Incidents(
            boto3.client("ssm"),
            boto3.client("sns"),
            settings.incidents,
            incident_manager=boto3.client("ssm-incidents") if settings.incidents.response_plan_arn else None,
        )
        status = (
            StatusRecords(boto3.client("dynamodb"), settings.state_table) if settings.state_table else None
        )
        return cls(incidents, settings.idempotency_table, status, settings.cluster)

    @cached_property
    def _idempotency(self) -> IdempotencyConfig:
        return idempotency_config()

    @cached_property
    def _announce_verified(self) -> Callable[[ResolveRequest], bool]:
        return announce_verified_once(self.incidents, self._table, self._idempotency)

    def handle(self, event: object, context: LambdaContext) -> dict[str, Any]:
        if not isinstance(event, dict):
            raise InvalidIncidentRequest("the request is not a JSON object")
        action = event.get("action")
        logger.append_keys(action=action)
        if action == "open":
            opened = self.incidents.open(self._own(OpenRequest.from_event(event)))
            if opened.created:
                metrics.add_metric(name="IncidentsOpened", unit="Count", value=1)
            self._record_verdict(event)
            return opened.to_json()
        if action == "resolve":
            # Lets Powertools expire an in-progress record when this invocation times out.
            self._idempotency.register_lambda_context(context)
            resolved = self.incidents.resolve(
                self._own(ResolveRequest.from_event(event)), self._announce_verified
            )
            if resolved.resolved:
                metrics.add_metric(name="IncidentsResolved", unit="Count", value=len(resolved.resolved))
            self._record_verdict(event)
            return resolved.to_json()
        raise InvalidIncidentRequest("action must be open or resolve")

    def _own(self, request: _Request) -> _Request:
        """The request, when it names this stack's cluster (one stack, one cluster)."""
        if self._cluster and request.cluster != self._cluster:
            raise InvalidIncidentRequest(f"this stack watches cluster {self._cluster}, not {request.cluster}")
        return request

    def _record_verdict(self, event: dict[str, Any]) -> None:
        """The run's verdict: kept for `hyperpod-ha status` and counted for the dashboard."""
        verdict = event.get("verdict")
        name = verdict_metric(verdict) if isinstance(verdict, str) else None
        if name is None:
            return
        metrics.add_metric(name=name, unit="Count", value=1)
        if self._status is not None:
            given = event.get("reasons")
            # Each cut to an excerpt: a state-table item holds at most 400 KB.
            reasons = [bounded_text(str(reason)) for reason in given[:12]] if isinstance(given, list) else []
            record = {"verdict": verdict, "reasons": reasons, "execution_id": event.get("execution_id")}
            accounting = accounting_record(event.get("accounting"))
            if accounting:
                record["accounting"] = accounting
            self._status.put(str(event["cluster"]), "verdict", record)
