"""A cluster event's record read again from SageMaker (``DescribeClusterEvent``), for an
EventBridge envelope whose metadata is null or partial."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from hyperpod_ha.aws_errors import error_code
from hyperpod_ha.ingestion.cluster_event_metadata import EventMetadata, parse_event_metadata

if TYPE_CHECKING:
    from mypy_boto3_sagemaker import SageMakerClient

# botocore's EventId shape: HyperPod's ids are UUIDs (anything else is not worth a call).
_EVENT_ID = re.compile(r"^[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}$")
_GONE = frozenset({"ResourceNotFound", "ValidationException"})


class ClusterEventRecords:
    def __init__(self, sagemaker: SageMakerClient) -> None:
        self._sagemaker = sagemaker

    def metadata(self, cluster: str, event_id: str) -> EventMetadata | None:
        """The record's metadata; ``None`` when SageMaker has no such event (or the id is not
        HyperPod's). Other errors propagate: the delivery is retried."""
        if not _EVENT_ID.match(event_id):
            return None
        try:
            record = self._sagemaker.describe_cluster_event(ClusterName=cluster, EventId=event_id)
        except ClientError as error:
            if error_code(error) in _GONE:
                return None
            raise
        details = record.get("EventDetails", {}).get("EventDetails") or {}
        return parse_event_metadata(details.get("EventMetadata"))
