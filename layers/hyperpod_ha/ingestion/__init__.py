"""Ingestion of triggers: SNS controller status messages and HyperPod's EventBridge events parsed
into typed values, bad input kept on a dead-letter queue, redeliveries and storms de-duplicated,
and what remains turned into a verification run or a notice to people; with the services of the
two functions that do it (``*_function``). May import the shared runtime modules and
:mod:`hyperpod_ha.runs`; only the handlers import it (and the old module paths re-exported here)."""

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
