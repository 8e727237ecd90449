"""Where :mod:`hyperpod_ha.topic_messages` and :mod:`hyperpod_ha.console_links` used to be; kept
for the importers of these names."""

from hyperpod_ha.console_links import (
    execution_console_url,
    incident_console_url,
    ops_item_console_url,
    partition_of,
)
from hyperpod_ha.topic_messages import (
    BODY_LIMIT,
    SUBJECT_LIMIT,
    Event,
    Links,
    OpenedIncident,
    incident_opened,
    publish,
    recovered,
    snapshot_summary,
    subject_line,
    verified,
)
from hyperpod_ha.topic_messages import TopicMessage as Notification

__all__ = [
    "BODY_LIMIT",
    "SUBJECT_LIMIT",
    "Event",
    "Links",
    "Notification",
    "OpenedIncident",
    "execution_console_url",
    "incident_console_url",
    "incident_opened",
    "ops_item_console_url",
    "partition_of",
    "publish",
    "recovered",
    "snapshot_summary",
    "subject_line",
    "verified",
]
