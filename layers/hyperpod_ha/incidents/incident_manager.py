"""Incident Manager: one incident per execution and kind (its client token), when a response
plan is configured. Its refusal is reported, not raised: the OpsItem stands without it."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from hyperpod_ha.aws_errors import error_code
from hyperpod_ha.incidents.keys import SOURCE, incident_client_token
from hyperpod_ha.incidents.limits import INCIDENT_RAW_DATA_LIMIT, INCIDENT_TITLE_LIMIT, bounded_chars
from hyperpod_ha.incidents.ops_item import as_json
from hyperpod_ha.observability import logger

if TYPE_CHECKING:
    from mypy_boto3_ssm.type_defs import CreateOpsItemRequestTypeDef
    from mypy_boto3_ssm_incidents import SSMIncidentsClient
    from mypy_boto3_ssm_incidents.type_defs import RelatedItemTypeDef, TriggerDetailsTypeDef

    from hyperpod_ha.incidents.models import OpenRequest
    from hyperpod_ha.topic_messages import Links

_TRIGGER_ARN = re.compile(r"^arn:aws(-cn|-us-gov)?:[a-z0-9-]*:[a-z0-9-]*:([0-9]{12})?:.+$")


def _related_items(ops_item_id: str, links: Links) -> list[RelatedItemTypeDef]:
    related: list[RelatedItemTypeDef] = []
    if links.ops_item:
        related.append(
            {
                "identifier": {"type": "OTHER", "value": {"url": links.ops_item}},
                "title": f"OpsCenter {ops_item_id}",
            }
        )
    if links.execution:
        related.append(
            {"identifier": {"type": "OTHER", "value": {"url": links.execution}}, "title": "Verification run"}
        )
    return related


class IncidentManager:
    def __init__(self, client: SSMIncidentsClient, response_plan_arn: str) -> None:
        self.client = client
        self.response_plan_arn = response_plan_arn

    def start(
        self, request: OpenRequest, create: CreateOpsItemRequestTypeDef, ops_item_id: str, links: Links
    ) -> tuple[str | None, str | None]:
        """The incident's ARN, or ``None`` and the reason it was refused."""
        raw = {
            "cluster": request.cluster,
            "verdict": request.verdict,
            "kind": request.kind,
            "ops_item_id": ops_item_id,
            "reasons": list(request.reasons),
        }
        trigger: TriggerDetailsTypeDef = {
            "source": SOURCE,
            "timestamp": datetime.now(UTC),
            "rawData": bounded_chars(as_json(raw), INCIDENT_RAW_DATA_LIMIT),
        }
        if _TRIGGER_ARN.match(request.execution_id):
            trigger["triggerArn"] = request.execution_id
        try:
            response = self.client.start_incident(
                responsePlanArn=self.response_plan_arn,
                clientToken=incident_client_token(request.execution_id, request.kind),
                title=bounded_chars(create["Title"], INCIDENT_TITLE_LIMIT),
                impact=int(create["Severity"]),
                triggerDetails=trigger,
                relatedItems=_related_items(ops_item_id, links),
            )
        except ClientError as error:
            reason = f"StartIncident failed: {error_code(error)}"
            logger.error(
                "incident manager refused the incident", extra={"reason": reason, "ops_item": ops_item_id}
            )
            return None, reason
        return response["incidentRecordArn"], None
