"""Everything the stack tells people on its notification topic, in one form.

- :mod:`.form`: the one form of a message (subject, attributes, bounded body) and publishing it;
- :mod:`.kinds`: one row per kind of problem or notice (severity, headline, what to look at);
- :mod:`.sections`: the parts message bodies share (trigger, controllers, reasons, next steps);
- :mod:`.publisher`: publishing at most once per event.

The form's names are exported here, so ``from hyperpod_ha.topic_messages import message`` reads as
what it is.
"""

from hyperpod_ha.topic_messages.form import (
    ATTRIBUTE_LIMIT,
    BODY_LIMIT,
    EVENTS,
    PREFIX,
    REQUIRED_ATTRIBUTES,
    SOURCE,
    SUBJECT_LIMIT,
    Cuttable,
    Event,
    Links,
    NotInTheOneForm,
    TopicMessage,
    bounded_body,
    check_form,
    dedup_key,
    message,
    publish,
    snapshot_summary,
    subject,
    subject_line,
)

__all__ = [
    "ATTRIBUTE_LIMIT",
    "BODY_LIMIT",
    "EVENTS",
    "PREFIX",
    "REQUIRED_ATTRIBUTES",
    "SOURCE",
    "SUBJECT_LIMIT",
    "Cuttable",
    "Event",
    "Links",
    "NotInTheOneForm",
    "TopicMessage",
    "bounded_body",
    "check_form",
    "dedup_key",
    "message",
    "publish",
    "snapshot_summary",
    "subject",
    "subject_line",
]
