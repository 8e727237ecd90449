"""Incidents: one OpsCenter OpsItem per cluster and kind of problem, Incident Manager when
configured, a message on the notification topic, and resolving them when the cluster is well.
Every effect is keyed on something stable (``keys``) so a retried call has no second effect, and
evidence is redacted (``hyperpod_ha.redaction``) and bounded (``limits``) before anything is
written. ``models`` (requests, results), ``ops_item`` (the OpsItem, pure), ``ops_center``,
``incident_manager`` and ``topic`` (the AWS adapters), ``opening`` and ``resolving`` (the two
actions), ``adapter`` (:class:`Incidents`, what the functions use), ``settings``, and
``service`` (IncidentFunction's). May import the runtime package's shared modules (errors,
settings, aws_errors, redaction, request_fields, notices, observability, status_records), never a
feature.
"""

from hyperpod_ha.incidents.adapter import Incidents
from hyperpod_ha.incidents.errors import IncidentFailed, InvalidIncidentRequest
from hyperpod_ha.incidents.keys import (
    CATEGORY,
    CLUSTER_KEY,
    DEDUP_KEY,
    ERROR_KEY,
    EVIDENCE_PREFIX,
    EXECUTION_KEY,
    INCIDENT_KEY,
    KIND_KEY,
    KIND_ROLLOUT_FAILED,
    KIND_VERIFICATION_ERROR,
    KINDS_NOT_RESOLVED_BY_DEFAULT,
    NOTIFIED_KEY,
    REASONS_KEY,
    RECOVERY_NOTIFIED_KEY,
    RESOLUTION_KEY,
    RESOLVED_BY_KEY,
    RESOURCES_KEY,
    SNAPSHOT_KEY,
    SOURCE,
    VERDICT_KEY,
    dedup_string,
    incident_client_token,
)
from hyperpod_ha.incidents.limits import (
    DESCRIPTION_LIMIT,
    INCIDENT_RAW_DATA_LIMIT,
    INCIDENT_TITLE_LIMIT,
    KEY_LIMIT,
    MAX_EVIDENCE_ENTRIES,
    OPERATIONAL_DATA_VALUE_LIMIT,
    TITLE_LIMIT,
    bounded,
)
from hyperpod_ha.incidents.models import OpenRequest, OpenResult, ResolveRequest, ResolveResult, WorkflowError
from hyperpod_ha.incidents.ops_item import (
    description_for,
    operational_data,
    ops_item_request,
    ops_item_tags,
    severity_for,
    title_for,
)
from hyperpod_ha.incidents.settings import IncidentFunctionSettings, IncidentSettings
from hyperpod_ha.redaction import REDACTED, redact, scrub_text

__all__ = [
    "CATEGORY",
    "CLUSTER_KEY",
    "DEDUP_KEY",
    "DESCRIPTION_LIMIT",
    "ERROR_KEY",
    "EVIDENCE_PREFIX",
    "EXECUTION_KEY",
    "INCIDENT_KEY",
    "INCIDENT_RAW_DATA_LIMIT",
    "INCIDENT_TITLE_LIMIT",
    "KEY_LIMIT",
    "KINDS_NOT_RESOLVED_BY_DEFAULT",
    "KIND_KEY",
    "KIND_ROLLOUT_FAILED",
    "KIND_VERIFICATION_ERROR",
    "MAX_EVIDENCE_ENTRIES",
    "NOTIFIED_KEY",
    "OPERATIONAL_DATA_VALUE_LIMIT",
    "REASONS_KEY",
    "RECOVERY_NOTIFIED_KEY",
    "REDACTED",
    "RESOLUTION_KEY",
    "RESOLVED_BY_KEY",
    "RESOURCES_KEY",
    "SNAPSHOT_KEY",
    "SOURCE",
    "TITLE_LIMIT",
    "VERDICT_KEY",
    "IncidentFailed",
    "IncidentFunctionSettings",
    "IncidentSettings",
    "Incidents",
    "InvalidIncidentRequest",
    "OpenRequest",
    "OpenResult",
    "ResolveRequest",
    "ResolveResult",
    "WorkflowError",
    "bounded",
    "dedup_string",
    "description_for",
    "incident_client_token",
    "operational_data",
    "ops_item_request",
    "ops_item_tags",
    "redact",
    "scrub_text",
    "severity_for",
    "title_for",
]
