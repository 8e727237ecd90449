"""What hyperpod-ha tells people on its notification topic (links: :mod:`hyperpod_ha.console_links`).

Messages are plain text so that e-mail, Chatbot and paging subscriptions all read them the
same way. The values handed in here are already free of secrets (``incidents`` redacts them);
this module only formats. SNS rules kept here: a subject is ASCII, has no line breaks and is
fewer than 100 characters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from hyperpod_ha.redaction import scrub_text

if TYPE_CHECKING:
    from mypy_boto3_sns import SNSClient
    from mypy_boto3_sns.type_defs import MessageAttributeValueTypeDef

SUBJECT_LIMIT = 99
# SNS accepts 256 KB; the body only carries a summary (the evidence lives on the OpsItem).
BODY_LIMIT = 64 * 1024

Event = Literal["incident-opened", "incident-still-open", "recovered", "verified"]


@dataclass(frozen=True)
class TopicMessage:
    subject: str
    body: str
    attributes: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Links:
    """Console links for one message; ``None`` where the target is not known."""

    execution: str | None = None
    ops_item: str | None = None
    incident: str | None = None

    def to_json(self) -> dict[str, str | None]:
        return {"execution": self.execution, "ops_item": self.ops_item, "incident": self.incident}


@dataclass(frozen=True)
class OpenedIncident:
    """An open problem, as the notification for it needs it."""

    cluster: str
    verdict: str
    kind: str
    severity: str
    title: str
    reasons: Sequence[str]
    error: str | None
    ops_item_id: str | None
    created: bool
    execution_id: str
    incident_arn: str | None
    links: Links
    snapshot: str | None = None


def snapshot_summary(snapshot: Mapping[str, object] | None) -> str | None:
    """One line about the run's snapshot (the SnapshotStateFunction's result), if there was one."""
    if not snapshot:
        return None
    kind, status = snapshot.get("kind"), snapshot.get("status")
    if kind == "unsupported":
        return f"none taken ({snapshot.get('detail') or 'not supported for this file system'})"
    outcome = "ok" if snapshot.get("succeeded") else ("in progress" if not snapshot.get("done") else "not ok")
    return " ".join(str(part) for part in (kind, snapshot.get("id"), status, f"({outcome})") if part)


def subject_line(text: str) -> str:
    """A subject SNS accepts: ASCII, one line, fewer than 100 characters."""
    ascii_text = text.encode("ascii", "replace").decode("ascii")
    one_line = " ".join(ascii_text.split())
    if len(one_line) <= SUBJECT_LIMIT:
        return one_line
    return one_line[: SUBJECT_LIMIT - 3].rstrip() + "..."


def bounded_body(lines: Sequence[str]) -> str:
    """The lines as one message body of at most SNS's limit (UTF-8 bytes), shortened with a note."""
    body = "\n".join(lines).rstrip() + "\n"
    encoded = body.encode("utf-8")
    if len(encoded) <= BODY_LIMIT:
        return body
    note = "\n[message shortened by hyperpod-ha; the OpsItem holds the full details]\n"
    keep = BODY_LIMIT - len(note.encode("utf-8"))
    return encoded[:keep].decode("utf-8", "ignore") + note


def _link_lines(links: Links, incident_arn: str | None = None) -> list[str]:
    lines: list[str] = []
    if links.ops_item:
        lines += ["OpsItem:", f"  {links.ops_item}"]
    if incident_arn:
        lines += ["Incident (Incident Manager):", f"  {incident_arn}"]
        if links.incident:
            lines.append(f"  {links.incident}")
    if links.execution:
        lines += ["Verification run (Step Functions):", f"  {links.execution}"]
    return lines


def _attributes(event: Event, cluster: str, verdict: str, **extra: str) -> dict[str, str]:
    # Subscription filter policies can route on these (for example page only on severity 1).
    values = {"event": event, "cluster": cluster, "verdict": verdict, **extra}
    return {key: value for key, value in values.items() if value}


def incident_opened(incident: OpenedIncident) -> TopicMessage:
    """The message for an open problem: a new OpsItem, or one that is still open."""
    event: Event = "incident-opened" if incident.created else "incident-still-open"
    state = "incident opened" if incident.created else "incident still open"
    problem = incident.verdict if incident.kind == incident.verdict else incident.kind
    subject = subject_line(f"hyperpod-ha {incident.cluster}: {problem} - {state} (sev {incident.severity})")
    lines = [
        incident.title,
        "",
        f"Cluster:   {incident.cluster}",
        f"Verdict:   {incident.verdict or '-'}",
        f"Problem:   {incident.kind}",
        f"Severity:  {incident.severity}",
    ]
    if incident.ops_item_id:
        opened = (
            "opened by this run" if incident.created else "already open; this run found the problem again"
        )
        lines.append(f"OpsItem:   {incident.ops_item_id} ({opened})")
    lines.append(f"Run:       {incident.execution_id}")
    if incident.snapshot:
        lines.append(f"Snapshot:  {incident.snapshot}")
    lines += ["", "Why:"]
    lines += [f"  - {reason}" for reason in incident.reasons] or ["  - (no reason given)"]
    if incident.error:
        lines += ["", "Error:", f"  {incident.error}"]
    lines += ["", *_link_lines(incident.links, incident.incident_arn)]
    lines += ["", "The per-controller evidence is attached to the OpsItem as operational data."]
    return TopicMessage(
        subject=subject,
        body=bounded_body(lines),
        attributes=_attributes(
            event, incident.cluster, incident.verdict, kind=incident.kind, severity=incident.severity
        ),
    )


def recovered(
    cluster: str,
    verdict: str,
    execution_id: str,
    resolved: Mapping[str, str],
    execution_link: str | None,
    *,
    snapshot: str | None = None,
) -> TopicMessage:
    """The message when a verification found the cluster well and closed open OpsItems.

    ``resolved`` maps each resolved OpsItem id to its console link.
    """
    subject = subject_line(f"hyperpod-ha {cluster}: recovered ({verdict})")
    lines = [
        f"HyperPod cluster {cluster} verified {verdict}; the open problem is resolved.",
        "",
        f"Cluster:   {cluster}",
        f"Verdict:   {verdict}",
        f"Run:       {execution_id}",
        *([f"Snapshot:  {snapshot}"] if snapshot else []),
        "",
        "Resolved OpsItems:",
        *[f"  - {ops_item}  {link}" for ops_item, link in resolved.items()],
        "",
        *_link_lines(Links(execution=execution_link)),
    ]
    return TopicMessage(
        subject=subject, body=bounded_body(lines), attributes=_attributes("recovered", cluster, verdict)
    )


_MEANING = {
    "HEALTHY": "the configured primary controller is active and the standbys answer",
    "FAILED_OVER": "a backup controller took over and serves; the old primary is not active",
}


def verified(
    cluster: str, verdict: str, execution_id: str, execution_link: str | None, *, snapshot: str | None = None
) -> TopicMessage:
    """The short message when a verification found the cluster well and nothing was open."""
    subject = subject_line(f"hyperpod-ha {cluster}: verified ({verdict})")
    lines = [
        f"HyperPod cluster {cluster} verified {verdict}: {_MEANING.get(verdict, 'the cluster is served')}.",
        "No problem was open.",
        "",
        f"Run:       {execution_id}",
        *([f"Snapshot:  {snapshot}"] if snapshot else []),
        *_link_lines(Links(execution=execution_link)),
    ]
    return TopicMessage(
        subject=subject, body=bounded_body(lines), attributes=_attributes("verified", cluster, verdict)
    )


def publish(sns: SNSClient, topic_arn: str, message: TopicMessage) -> str:
    """Publish one message; returns the SNS MessageId."""
    attributes: dict[str, MessageAttributeValueTypeDef] = {
        key: {"DataType": "String", "StringValue": value} for key, value in message.attributes.items()
    }
    # The one redaction path: a reason or excerpt written into the message does not leak.
    response = sns.publish(
        TopicArn=topic_arn,
        Subject=subject_line(scrub_text(message.subject)),
        Message=bounded_body([scrub_text(message.body)]),
        MessageAttributes=attributes,
    )
    return response["MessageId"]
