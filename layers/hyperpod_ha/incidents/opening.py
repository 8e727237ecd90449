"""Opening an incident: the OpsItem (once per cluster and kind), the Incident Manager incident
(once, by whoever created the OpsItem), the message (once per execution), each found done
already on a retried call by the markers in the OpsItem's operational data."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hyperpod_ha import console_links, topic_messages
from hyperpod_ha.incidents.keys import EXECUTION_KEY, INCIDENT_KEY, NOTIFIED_KEY
from hyperpod_ha.incidents.limits import bounded
from hyperpod_ha.incidents.models import OpenRequest, OpenResult
from hyperpod_ha.incidents.ops_center import OpsCenter, data_value
from hyperpod_ha.incidents.ops_item import ops_item_request
from hyperpod_ha.observability import logger
from hyperpod_ha.topic_messages import Links, OpenedIncident

if TYPE_CHECKING:
    from mypy_boto3_ssm.type_defs import CreateOpsItemRequestTypeDef, OpsItemDataValueTypeDef

    from hyperpod_ha.incidents.incident_manager import IncidentManager
    from hyperpod_ha.incidents.topic import Topic


def open_incident(
    request: OpenRequest,
    ops_center: OpsCenter,
    topic: Topic,
    region: str,
    incident_manager: IncidentManager | None,
) -> OpenResult:
    create = ops_item_request(request)
    ops_item_id = ops_center.create(create, request.cluster, request.kind)
    data = ops_center.get(ops_item_id).get("OperationalData") or {}
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

    notified = data_value(data, NOTIFIED_KEY) == request.execution_id
    if not notified and topic.arn:
        topic.publish(_opened_message(request, create, ops_item_id, created, incident_arn, links))
        notified = True
        updates[NOTIFIED_KEY] = {"Type": "SearchableString", "Value": bounded(request.execution_id)}
    elif not topic.arn:
        logger.warning(
            "no notification topic configured; incident not announced", extra={"ops_item": ops_item_id}
        )
    if updates:
        ops_center.update(ops_item_id, updates)
    logger.info(
        "incident open",
        extra={
            "cluster": request.cluster,
            "kind": request.kind,
            "ops_item": ops_item_id,
            "opened_now": created,
        },
    )
    return OpenResult(ops_item_id, created, incident_arn, notified, links, incident_error)


def _opened_message(
    request: OpenRequest,
    create: CreateOpsItemRequestTypeDef,
    ops_item_id: str,
    created: bool,
    incident_arn: str | None,
    links: Links,
) -> topic_messages.TopicMessage:
    return topic_messages.incident_opened(
        OpenedIncident(
            cluster=request.cluster,
            verdict=request.verdict,
            kind=request.kind,
            severity=create["Severity"],
            title=create["Title"],
            reasons=request.reasons,
            error=request.error.summary(2000) if request.error else None,
            ops_item_id=ops_item_id,
            created=created,
            execution_id=request.execution_id,
            incident_arn=incident_arn,
            links=links,
            snapshot=topic_messages.snapshot_summary(request.snapshot),
        )
    )
