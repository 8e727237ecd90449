"""The dead-letter queue of a trigger function: where rejected input is kept with its reason."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from hyperpod_ha.ingestion.dead_letter_body import MAX_ID_CHARS, MAX_REASON_CHARS, rejected_body
from hyperpod_ha.observability import logger
from hyperpod_ha.redaction import scrub_text

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient


class RejectedInputs:
    """The dead-letter queue for input this project will never understand."""

    def __init__(self, sqs: SQSClient, queue_url: str) -> None:
        self._sqs = sqs
        self._queue_url = queue_url

    def keep(self, source: str, input_id: str, reason: str, raw: Any) -> None:
        input_id = str(input_id)[:MAX_ID_CHARS]
        # Cut, then redacted: the attribute and the log carry it too.
        reason = scrub_text(str(reason)[:MAX_REASON_CHARS])
        self._sqs.send_message(
            QueueUrl=self._queue_url,
            MessageBody=rejected_body(source, input_id, reason, raw),
            MessageAttributes={
                "reason": {"DataType": "String", "StringValue": _attribute(reason)},
                "source": {"DataType": "String", "StringValue": _attribute(source)},
            },
        )
        logger.warning("input rejected", extra={"source": source, "input_id": input_id, "reason": reason})


def _attribute(text: str) -> str:
    # An attribute value must be non-empty and hold only characters SQS allows: ASCII escapes.
    return json.dumps(text[:256])[1:-1][:256] or "-"
