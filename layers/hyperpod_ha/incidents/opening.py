"""Opening an incident: the OpsItem (once per cluster and kind), the Incident Manager incident
(once, by whoever created the OpsItem), the "opened" message (once, by the run that created
it) or a "still open" reminder (at most once per ReminderMinutes, :mod:`.reminders`), each found
done already on a retried call by the markers in the OpsItem's operational data."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hyperpod_ha import console_links
from hyperpod_ha.human_time import parse_utc
from hyperpod_ha.incidents import messages
from hyperpod_ha.incidents.keys import EXECUTION_KEY, INCIDENT_KEY, NOTIFIED_KEY
from hyperpod_ha.incidents.limits import bounded
from hyperpod_ha.incidents.messages import OpenedIncident
from hyperpod_ha.incidents.models import OpenMessage, OpenRequest, OpenResult
from hyperpod_ha.incidents.ops_center import OpsCenter, data_value
from hyperpod_ha.incidents.ops_item import ops_item_request
from hyperpod_ha.observability import logger
from hyperpod_ha.topic_messages import Links

if TYPE_CHECKING:
    from mypy_boto3_ssm.type_defs import OpsItemDataValueTypeDef

    from hyperpod_ha.incidents.incident_manager import IncidentManager
    from hyperpod_ha.incidents.reminders import Reminders
    from hyperpod_ha.incidents.topic import Topic


def open_incident(
    request: OpenRequest,
    ops_center: OpsCenter,
    topic: Topic,
    region: str,
    incident_manager: IncidentManager | None,
    reminders: Reminders,
    now: float,
    *,
    stack_name: str | None = None,
) -> OpenResult:
    create = ops_item_request(request)
    ops_item_id = ops_center.create(create, request.cluster, request.kind)
    item = ops_center.get(ops_item_id)
    data = item.get("OperationalData") or {}
    # Our own execution opened it (now, or on an earlier attempt of this same call).
    created = data_value(data, EXECUTION_KEY) == request.execution_id
    partition = console_links.partition_of(request.execution_id)
    links = Links(
        execution=console_links.execution_console_url(request.execution_id, region),
        ops_item=console_links.ops_item_console_url(ops_item_id, region, partition),
    )
    updates: dict[str, OpsItemDataValueTypeDef] = {}
    incident_arn = data_value(data, INCIDENT_KEY)
    incident_error: str | None = None
    if created and incident_arn is None and incident_manager:
        incident_arn, incident_error = incident_manager.start(request, create, ops_item_id, links)
        if incident_arn:
            updates[INCIDENT_KEY] = {"Type": "SearchableString", "Value": incident_arn}
    if incident_arn:
        links = Links(links.execution, links.ops_item, console_links.incident_console_url(region, partition))

    opened = OpenedIncident(
        ops_item_id, created, create["Severity"], incident_arn, links, parse_utc(item.get("CreatedTime"))
    )
    # A retried call of a run that told people already tells nothing more.
    told = data_value(data, NOTIFIED_KEY) == request.execution_id
    sent = None if told else _tell(request, opened, topic, region, reminders, now, stack_name)
    notified = told or sent is not None
    if sent is not None:
        updates[NOTIFIED_KEY] = {"Type": "SearchableString", "Value": bounded(request.execution_id)}
    if updates:
        ops_center.update(ops_item_id, updates)
    logger.info(
        "incident open",
        extra={
            "cluster": request.cluster,
            "kind": request.kind,
            "ops_item": ops_item_id,
            "opened_now": created,
            "told": sent,
        },
    )
    return OpenResult(ops_item_id, created, incident_arn, notified, links, incident_error, sent)


def _tell(
    request: OpenRequest,
    incident: OpenedIncident,
    topic: Topic,
    region: str,
    reminders: Reminders,
    now: float,
    stack_name: str | None,
) -> OpenMessage | None:
    """The message this run sends about the incident: "opened" by the run that created it,
    "reminder" when one is due (:mod:`.reminders`); else none."""
    if not topic.arn:
        logger.warning(
            "no notification topic configured; incident not announced",
            extra={"ops_item": incident.ops_item_id},
        )
        return None
    if incident.created:
        topic.publish(messages.opened(request, incident, region, now, stack_name=stack_name))
        return "opened"
    assert incident.ops_item_id
    if not reminders.claim(request.cluster, incident.ops_item_id, incident.opened_at, now):
        logger.info("incident still open; no reminder due", extra={"ops_item": incident.ops_item_id})
        return None
    try:
        topic.publish(
            messages.reminder(request, incident, region, now, reminders.every_seconds, stack_name=stack_name)
        )
    except Exception:
        reminders.release(request.cluster, incident.ops_item_id, now)
        raise
    return "reminder"
