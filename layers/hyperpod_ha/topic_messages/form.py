"""The one form of every message the stack publishes to its notification topic, and publishing it.

Subject: ``[hyperpod-ha] <cluster>: <what happened> (sev N)`` (ASCII, one line, fewer than 100
characters: only ``what happened`` is ever cut). Attributes, on every message, for subscription
filter policies: ``cluster``, ``kind`` (:mod:`hyperpod_ha.topic_messages.kinds`), ``severity`` ("1"
critical .. "4" low), ``event`` (``opened``, ``reminder``, ``resolved`` or ``notice``),
``dedup_key`` (one per cluster and problem, the OpsItem's dedup string: a paging service keys
its trigger and resolve on it), ``level`` (the severity as the word paging services take:
``critical``, ``error``, ``warning``, ``info``; EventBridge Pipes cannot map a value, so the
message carries it) and ``verdict`` where there is one. The body is plain text
(e-mail, Chatbot and paging read it alike), within SNS's 256 KiB: a list that may be long
(every reason) is a :class:`Cuttable`, cut at its end with "… N more" when the whole would not
fit.

:func:`message` is the only way a message is made and :func:`publish` the only way one is sent:
it refuses a message not in this form, and sends subject, body and attributes through the one
redaction path. The bodies' shared parts are in :mod:`hyperpod_ha.topic_messages.sections`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal, get_args

from hyperpod_ha.errors import HyperpodHaError
from hyperpod_ha.redaction import scrub_text
from hyperpod_ha.topic_messages import kinds

if TYPE_CHECKING:
    from mypy_boto3_sns import SNSClient
    from mypy_boto3_sns.type_defs import MessageAttributeValueTypeDef

SUBJECT_LIMIT: Final = 99
PREFIX: Final = "[hyperpod-ha]"
# SNS takes 256 KiB in all: the body keeps 4 KiB for the subject and the attributes.
BODY_LIMIT: Final = 256 * 1024 - 4 * 1024
ATTRIBUTE_LIMIT: Final = 256

Event = Literal["opened", "reminder", "resolved", "notice"]
EVENTS: Final = get_args(Event)
REQUIRED_ATTRIBUTES: Final = ("cluster", "kind", "severity", "event", "dedup_key", "level")
# Severity "1" .. "4" as PagerDuty's Events v2 payload.severity (the paging section of template.yaml).
LEVELS: Final = {"1": "critical", "2": "error", "3": "warning", "4": "info"}
SOURCE: Final = "hyperpod-ha"
_SUBJECT = re.compile(r"^\[hyperpod-ha\] [A-Za-z0-9-]{1,63}: .+ \(sev [1-4]\)$")


class NotInTheOneForm(HyperpodHaError, ValueError):
    """A message that is not in the one form: a programming error, never sent."""


@dataclass(frozen=True)
class TopicMessage:
    subject: str
    body: str
    attributes: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Cuttable:
    """Lines that may be cut at their end to keep the body within the limit; ``note`` says how
    many were left off (``{count}``)."""

    lines: tuple[str, ...]
    note: str = "  … {count} more"


@dataclass(frozen=True)
class Links:
    """Console links for one message; ``None`` where the target is not known."""

    execution: str | None = None
    ops_item: str | None = None
    incident: str | None = None

    def to_json(self) -> dict[str, str | None]:
        return {"execution": self.execution, "ops_item": self.ops_item, "incident": self.incident}


def subject_line(text: str) -> str:
    """A subject SNS accepts: ASCII, one line, fewer than 100 characters."""
    one_line = " ".join(text.encode("ascii", "replace").decode("ascii").split())
    if len(one_line) <= SUBJECT_LIMIT:
        return one_line
    return one_line[: SUBJECT_LIMIT - 3].rstrip() + "..."


def subject(cluster: str, what: str, severity: str) -> str:
    """``[hyperpod-ha] <cluster>: <what> (sev N)``; ``what`` is cut to fit, never the rest."""
    head, tail = f"{PREFIX} {cluster}: ", f" (sev {severity})"
    room = SUBJECT_LIMIT - len(head) - len(tail)
    words = " ".join(scrub_text(what).encode("ascii", "replace").decode("ascii").split()) or "-"
    if len(words) > room:
        words = words[: max(room - 3, 1)].rstrip() + "..."
    return head + words + tail


def dedup_key(cluster: str, problem: str) -> str:
    """One per cluster and problem: the OpsItem's dedup string, the paging service's key."""
    return f"{SOURCE}:{cluster}:{problem}"


def message(
    *,
    cluster: str,
    kind: str,
    event: Event,
    what: str,
    body: Sequence[str | Cuttable],
    verdict: str = "",
    severity: str | None = None,
    problem: str | None = None,
) -> TopicMessage:
    """A message in the one form. ``severity``: the kind's (:mod:`hyperpod_ha.topic_messages.kinds`)
    unless given (a resolution carries the severity of what it resolves); ``problem``: the kind
    whose dedup key it carries, when not its own (a resolution: the problem it resolves)."""
    severity = severity or kinds.severity_of(kind, verdict)
    attributes = {
        "cluster": cluster,
        "kind": kind,
        "severity": severity,
        "event": event,
        "dedup_key": dedup_key(cluster, problem or kind),
        "level": LEVELS[severity],
    }
    if verdict:
        attributes["verdict"] = verdict
    return TopicMessage(subject(cluster, what, severity), bounded_body(body), attributes)


def check_form(message: TopicMessage) -> None:
    """Raise :class:`NotInTheOneForm` unless ``message`` has the one subject form and attributes."""
    missing = [name for name in REQUIRED_ATTRIBUTES if not message.attributes.get(name)]
    if missing:
        raise NotInTheOneForm(f"the message lacks the attributes {missing}")
    if not _SUBJECT.match(message.subject) or len(message.subject) > SUBJECT_LIMIT:
        raise NotInTheOneForm("the subject is not '[hyperpod-ha] <cluster>: <what happened> (sev N)'")
    if message.attributes["severity"] not in kinds.SEVERITIES:
        raise NotInTheOneForm("severity is not 1..4")
    if message.attributes["level"] != LEVELS[message.attributes["severity"]]:
        raise NotInTheOneForm("level is not the severity's word")
    if message.attributes["event"] not in EVENTS:
        raise NotInTheOneForm(f"event is not one of {EVENTS}")
    if not message.subject.endswith(f"(sev {message.attributes['severity']})"):
        raise NotInTheOneForm("the subject's severity is not the attribute's")


def bounded_body(parts: Sequence[str | Cuttable], limit: int = BODY_LIMIT) -> str:
    """The parts as one body of at most ``limit`` UTF-8 bytes: each :class:`Cuttable` shortened
    at its end (the last first) with its note, never a line in the middle."""
    sizes = [[_size(line) for line in part.lines] if isinstance(part, Cuttable) else [] for part in parts]
    kept = [len(part.lines) if isinstance(part, Cuttable) else 0 for part in parts]
    total = sum(_size(part) if isinstance(part, str) else sum(sizes[i]) for i, part in enumerate(parts))
    cuttable = [i for i, part in enumerate(parts) if isinstance(part, Cuttable)]
    notes = 0
    while total + notes > limit and any(kept[i] for i in cuttable):
        i = next(i for i in reversed(cuttable) if kept[i])
        kept[i] -= 1
        total -= sizes[i][kept[i]]
        notes = sum(_size(_note(parts[j], kept[j])) for j in cuttable if kept[j] < len(sizes[j]))
    lines: list[str] = []
    for i, part in enumerate(parts):
        if isinstance(part, Cuttable):
            lines += part.lines[: kept[i]]
            if kept[i] < len(part.lines):
                lines.append(_note(part, kept[i]))
        else:
            lines.append(part)
    return _cut_bytes("\n".join(lines).rstrip() + "\n", limit)


def _note(part: str | Cuttable, kept: int) -> str:
    assert isinstance(part, Cuttable)
    return part.note.format(count=len(part.lines) - kept)


def _size(line: str) -> int:
    return len(line.encode("utf-8")) + 1


def _cut_bytes(body: str, limit: int) -> str:
    """The last resort (lines that are not cuttable exceed the limit): a byte cut with a note."""
    encoded = body.encode("utf-8")
    if len(encoded) <= limit:
        return body
    note = "\n[message shortened by hyperpod-ha; the OpsItem holds the full details]\n"
    keep = limit - len(note.encode("utf-8"))
    return encoded[:keep].decode("utf-8", "ignore") + note


def snapshot_summary(snapshot: Mapping[str, object] | None) -> str | None:
    """One line about the run's snapshot (the SnapshotStateFunction's result), if there was one."""
    if not snapshot:
        return None
    kind, status = snapshot.get("kind"), snapshot.get("status")
    if kind == "unsupported":
        return f"none taken ({snapshot.get('detail') or 'not supported for this file system'})"
    outcome = "ok" if snapshot.get("succeeded") else ("in progress" if not snapshot.get("done") else "not ok")
    return " ".join(str(part) for part in (kind, snapshot.get("id"), status, f"({outcome})") if part)


def publish(sns: SNSClient, topic_arn: str, message: TopicMessage) -> str:
    """Publish one message in the one form (:class:`NotInTheOneForm` otherwise); returns the SNS
    MessageId."""
    # The one redaction path: a reason or excerpt written into the message does not leak.
    sent = TopicMessage(
        subject_line(scrub_text(message.subject)),
        _cut_bytes(scrub_text(message.body), BODY_LIMIT),
        {name: scrub_text(value)[:ATTRIBUTE_LIMIT] for name, value in message.attributes.items()},
    )
    check_form(sent)
    attributes: dict[str, MessageAttributeValueTypeDef] = {
        name: {"DataType": "String", "StringValue": value} for name, value in sent.attributes.items()
    }
    response = sns.publish(
        TopicArn=topic_arn, Subject=sent.subject, Message=sent.body, MessageAttributes=attributes
    )
    return response["MessageId"]
