"""Incidents: one OpsCenter OpsItem per cluster and kind of problem, Incident Manager when
configured, a message on the notification topic, and resolving them when the cluster is well.
Every effect is keyed on something stable (``keys``) so a retried call has no second effect, and
evidence is redacted (``hyperpod_ha.redaction``) and bounded (``limits``) before anything is
written. ``models`` (requests, results), ``ops_item`` (the OpsItem, pure), ``ops_center``,
``incident_manager`` and ``topic`` (the AWS calls, each named for what it touches), ``opening``,
``resolving`` and ``noting`` (the three actions; a note adds a restore's actions to the open
OpsItems), ``tracking`` (:class:`Incidents`, what the functions use), ``settings`` (where
incidents go), and ``function`` (IncidentFunction and its settings). May import the runtime
package's shared modules (errors, environment, aws_errors, redaction, request_fields,
json_input, human_time, topic_messages, observability, status_records), never a feature.
"""

from hyperpod_ha.incidents.errors import IncidentFailed, InvalidIncidentRequest
from hyperpod_ha.incidents.models import (
    NoteRequest,
    NoteResult,
    OpenRequest,
    OpenResult,
    ResolveRequest,
    ResolveResult,
    WorkflowError,
)
from hyperpod_ha.incidents.settings import IncidentSettings
from hyperpod_ha.incidents.tracking import Incidents

# What the other features and the functions use; the keys, limits and the OpsItem's parts are
# imported from their modules.
__all__ = [
    "IncidentFailed",
    "IncidentSettings",
    "Incidents",
    "InvalidIncidentRequest",
    "NoteRequest",
    "NoteResult",
    "OpenRequest",
    "OpenResult",
    "ResolveRequest",
    "ResolveResult",
    "WorkflowError",
]
