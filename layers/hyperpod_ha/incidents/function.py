"""IncidentFunction and its settings: ``{"action": "open" | "resolve" | "note", ...}`` handled,
counted on the dashboard, and the run's verdict kept for ``hyperpod-ha status``. ``note`` (the
restore of redundancy) adds what a restore did to the cluster's open incidents of some kinds."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from hyperpod_ha.environment import OptionalText, Settings, Text
from hyperpod_ha.incidents.errors import InvalidIncidentRequest, NoteRefused
from hyperpod_ha.incidents.models import MAX_REASONS, NoteRequest, OpenRequest, ResolveRequest
from hyperpod_ha.incidents.settings import IncidentSettings
from hyperpod_ha.incidents.tracking import Incidents
from hyperpod_ha.incidents.verified_once import announce_verified_once, idempotency_config
from hyperpod_ha.observability import add_cluster_metric, logger, metrics
from hyperpod_ha.own_executions import OwnExecutions, StepFunctionsExecutions
from hyperpod_ha.request_fields import bounded_text
from hyperpod_ha.status_records import (
    StatusRecords,
    accounting_record,
    advisories_record,
    controllers_record,
    redundancy_record,
    verdict_metric,
)

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig
    from aws_lambda_powertools.utilities.typing import LambdaContext

_Request = TypeVar("_Request", OpenRequest, ResolveRequest, NoteRequest)


@dataclass(frozen=True)
class IncidentFunctionSettings(Settings):
    """IncidentFunction's environment."""

    incidents: IncidentSettings
    # Without it a retried resolve may repeat the "verified" message.
    idempotency_table: Annotated[str | None, OptionalText("IDEMPOTENCY_TABLE")] = None
    # Where the run's verdict is kept for `hyperpod-ha status`; not kept without it.
    state_table: Annotated[str | None, OptionalText("STATE_TABLE")] = None
    # The stack's cluster: a request naming another is refused ("" only in settings made by hand).
    cluster: Annotated[str, Text("CLUSTER_NAME", "")] = ""
    # The stack's restore state machine (by its name: it references this function): a note comes
    # only from its running executions. "" only in settings made by hand: then no note is taken.
    restore_state_machine_arn: Annotated[str, Text("RESTORE_STATE_MACHINE_ARN", "")] = ""


@dataclass(frozen=True)
class IncidentFunction:
    incidents: Incidents
    # Without it a retried resolve may repeat the "verified" message.
    idempotency_table: str | None
    status: StatusRecords | None
    cluster: str = ""  # "" only in a function made by hand: then any cluster's request is taken
    # The restore's executions a note may come from; None (a function made by hand): no note.
    restores: OwnExecutions | None = None

    @classmethod
    def from_settings(cls, settings: IncidentFunctionSettings) -> IncidentFunction:
        """The function with its clients: Incident Manager's only when a response plan is set."""
        import boto3

        incidents = Incidents.from_settings(settings.incidents)
        status = (
            StatusRecords(boto3.client("dynamodb"), settings.state_table) if settings.state_table else None
        )
        restores = (
            OwnExecutions(
                settings.restore_state_machine_arn,
                StepFunctionsExecutions(cache(lambda: boto3.client("stepfunctions"))),
                "restore",
            )
            if settings.restore_state_machine_arn
            else None
        )
        return cls(incidents, settings.idempotency_table, status, settings.cluster, restores)

    @cached_property
    def _idempotency(self) -> IdempotencyConfig:
        return idempotency_config()

    @cached_property
    def _announce_verified(self) -> Callable[[ResolveRequest], bool]:
        return announce_verified_once(self.incidents, self.idempotency_table, self._idempotency)

    def handle(self, event: object, context: LambdaContext) -> dict[str, Any]:
        try:
            return self._action(event, context)
        finally:
            if metrics.metric_set:  # a failed step emits nothing: no empty-metrics warning
                metrics.flush_metrics()

    def _action(self, event: object, context: LambdaContext) -> dict[str, Any]:
        if not isinstance(event, dict):
            raise InvalidIncidentRequest("the request is not a JSON object")
        action = event.get("action")
        logger.append_keys(action=action)
        superseded = self._superseded(event) if action in ("open", "resolve") else None
        if superseded is not None:
            logger.info("a later run decided the incident", extra={"superseded_by": superseded})
            return {"superseded_by": superseded}
        if action == "open":
            opened = self.incidents.open(self._own(OpenRequest.from_event(event)))
            if opened.created:
                metrics.add_metric(name="IncidentsOpened", unit="Count", value=1)
            if opened.silenced is not None:
                metrics.add_metric(name="IncidentsSilenced", unit="Count", value=1)
            # Recorded whether or not it was silenced: the verdict is what the run found.
            self._record_verdict(event, silenced=opened.silenced)
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
        if action == "note":
            request = self._own(NoteRequest.from_event(event))
            self._from_running_restore(request.execution_id)
            return self.incidents.note(request).to_json()
        raise InvalidIncidentRequest("action must be open, resolve or note")

    def _superseded(self, event: dict[str, Any]) -> str | None:
        """A run that handed the cluster to a restore (``handed_to``) decides its incident after
        its snapshot, which may end after the run the restore started decided: that later
        decision stands. The execution of a verdict recorded by a run started after this one,
        or ``None``."""
        if not event.get("handed_to") or self.status is None or not isinstance(event.get("cluster"), str):
            return None
        recorded = self.status.read_one(event["cluster"], "verdict")
        later = _instant(recorded.get("started_at")) if recorded else None
        mine = _instant(event.get("started_at"))
        if recorded is None or later is None or mine is None or later <= mine:
            return None
        return bounded_text(str(recorded.get("execution_id") or "a later run"))

    def _from_running_restore(self, execution_id: str) -> None:
        """A note's lines go on the open incidents only from a running restore of this stack
        (asked of Step Functions): a direct invoke would write any text there."""
        if self.restores is None:
            raise NoteRefused("this function knows no restore state machine: nothing is noted")
        self.restores.check(execution_id, NoteRefused, "nothing is noted: ")

    def _own(self, request: _Request) -> _Request:
        """The request, when it names this stack's cluster (one stack, one cluster)."""
        if self.cluster and request.cluster != self.cluster:
            raise InvalidIncidentRequest(f"this stack watches cluster {self.cluster}, not {request.cluster}")
        return request

    def _record_verdict(self, event: dict[str, Any], silenced: Mapping[str, Any] | None = None) -> None:
        """The run's verdict: kept for `hyperpod-ha status` and counted for the dashboard; with
        the operator's silence that kept its incident from opening, if one did."""
        verdict = event.get("verdict")
        name = verdict_metric(verdict) if isinstance(verdict, str) else None
        if name is None:
            return
        metrics.add_metric(name=name, unit="Count", value=1)
        redundancy = redundancy_record(event)
        if redundancy is not None and redundancy["redundancy"] != "unknown":
            add_cluster_metric("ReadyStandbys", len(redundancy["standbys"]), str(event["cluster"]))
        missed = event.get("missed_notifications")
        if isinstance(missed, int) and not isinstance(missed, bool) and 0 <= missed < 1_000_000:
            # The ON/OFF program's failed publishes of the last hour, as the run's verdict saw them.
            add_cluster_metric("ControllerNotificationsFailed", missed, str(event["cluster"]))
        if self.status is not None:
            given = event.get("reasons")
            # Every reason the request may hold, each an excerpt: 32 x 2 KiB, far under an item's 400 KB.
            kept = given[:MAX_REASONS] if isinstance(given, list) else []
            reasons = [bounded_text(str(reason)) for reason in kept]
            record = {
                "verdict": verdict,
                "reasons": reasons,
                "execution_id": event.get("execution_id"),
                "started_at": event.get("started_at"),  # which run decided last (_superseded)
            }
            accounting = accounting_record(event.get("accounting"))
            if accounting:
                record["accounting"] = accounting
            controllers = controllers_record(event.get("evidence"))
            if controllers:
                record["controllers"] = controllers
                active = [row["name"] for row in controllers if row["active"]]
                record["active_controller"] = active[0] if len(active) == 1 else None
            if redundancy is not None:
                record.update(redundancy)
            if advisories := advisories_record(event):
                record["advisories"] = advisories
            if silenced is not None:
                record["silenced"] = {key: silenced.get(key) for key in ("until", "started_by", "reason")}
            self.status.put(str(event["cluster"]), "verdict", record)
        # Known-bad releases: a notice once per advisory and release, never a page.
        self.incidents.announce_advisories(str(event["cluster"]), advisories_record(event))


def _instant(value: object) -> dt.datetime | None:
    """An execution's start time (ISO 8601), or ``None`` when it is none."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        instant = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return instant if instant.tzinfo is not None else instant.replace(tzinfo=dt.UTC)
