"""Ingestion of triggers: the SNS controller status messages and HyperPod's EventBridge events
parsed into typed values, bad input kept on a dead-letter queue, redeliveries and storms
de-duplicated, and what remains turned into a verification run (:mod:`hyperpod_ha.runs`) or a
notice to people. Also the two functions' services (``*_function`` modules).

May import the runtime package's shared modules and :mod:`hyperpod_ha.runs`; nothing imports
it but the handlers (and the old module paths kept below for their importers).
"""

from hyperpod_ha.ingestion.controller_status_function import controller_notification_record
from hyperpod_ha.ingestion.dead_letter_body import MAX_KEPT_BYTES, SQS_MAX_BODY_BYTES, rejected_body
from hyperpod_ha.ingestion.node_event_triage import NodeEventTriage
from hyperpod_ha.ingestion.rejected_inputs import RejectedInputs

__all__ = [
    "MAX_KEPT_BYTES",
    "SQS_MAX_BODY_BYTES",
    "NodeEventTriage",
    "RejectedInputs",
    "controller_notification_record",
    "rejected_body",
]
