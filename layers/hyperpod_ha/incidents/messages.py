"""What people are told about an incident: opened, still open (a reminder), recovered, and
verified when nothing was open. Pure: every value, the clock and the links are passed in; the
form is :mod:`hyperpod_ha.topic_messages`', the shared parts
:mod:`hyperpod_ha.topic_messages.sections`'."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hyperpod_ha.human_time import duration, utc_minute
from hyperpod_ha.incidents.models import OpenRequest, ResolveRequest
from hyperpod_ha.topic_messages import Cuttable, Links, TopicMessage, kinds, message, snapshot_summary
from hyperpod_ha.topic_messages.sections import (
    controller_lines,
    controllers_of,
    facts,
    next_steps,
    on_call_command,
    reason_lines,
    when,
)

_MEANING = {
    "HEALTHY": "the configured primary controller is active and serves",
    "FAILED_OVER": "a backup controller took over and serves; the old primary is not active",
}
# The code of a verdict's reason that no standby is ready (hyperpod_ha.verdict.reasons'
# NO_READY_STANDBY; incidents imports no feature, a unit test keeps the two equal).
NO_READY_STANDBY = "no-ready-standby"


def _no_standby(request: ResolveRequest) -> str | None:
    """The verdict's reason that no standby is ready, if it gave one."""
    given = zip(request.reason_codes, request.reasons, strict=False)
    return next((text for code, text in given if code == NO_READY_STANDBY), None)


_SEVERITY_SCALE = " (1 critical .. 4 low)"


@dataclass(frozen=True)
class OpenedIncident:
    """The OpsItem an open request found or made, as its message needs it."""

    ops_item_id: str | None
    created: bool
    severity: str
    incident_arn: str | None
    links: Links
    opened_at: float | None = None  # the OpsItem's CreatedTime


@dataclass(frozen=True)
class ResolvedIncident:
    ops_item_id: str
    kind: str
    severity: str
    link: str
    opened_at: float | None = None


def headline(request: OpenRequest) -> str:
    """``DOWN: no Slurm controller is active``; DEGRADED says its problem (what, on whom): the
    verdict's most severe reason (hyperpod_ha.verdict.reasons)."""
    row = kinds.kind(request.kind)
    if request.kind == "DEGRADED" and request.problem:
        return f"DEGRADED: {request.problem}"
    if request.kind in (request.verdict, "DEGRADED"):
        return f"{request.kind}: {row.headline}"
    return f"{row.headline} ({request.verdict})" if request.verdict else row.headline


def opened(
    request: OpenRequest, incident: OpenedIncident, region: str, now: float, *, stack_name: str | None = None
) -> TopicMessage:
    """The incident is open: the OpsItem is new (opened by this run) or was open already.
    ``stack_name`` (here and below) completes the commands the message prints."""
    first = f"{headline(request)} (HyperPod cluster {request.cluster})."
    state = "opened by this run" if incident.created else "already open; this run found the problem again"
    return _incident_message(
        request, incident, region, now, "opened", headline(request), first, state, stack_name
    )


def reminder(
    request: OpenRequest,
    incident: OpenedIncident,
    region: str,
    now: float,
    every_seconds: int,
    *,
    stack_name: str | None = None,
) -> TopicMessage:
    """The incident is still open (at most once per ``every_seconds``, :mod:`.reminders`)."""
    since = f" for {duration(now - incident.opened_at)}" if incident.opened_at is not None else ""
    first = f"Still open{since}: {headline(request)} (HyperPod cluster {request.cluster})."
    state = (
        f"open since {when(incident.opened_at, now) or 'an earlier run'}; the next reminder comes "
        f"at most every {duration(every_seconds)} while it stays open"
    )
    what = f"still open{since}: {headline(request)}"
    return _incident_message(request, incident, region, now, "reminder", what, first, state, stack_name)


def _incident_message(
    request: OpenRequest,
    incident: OpenedIncident,
    region: str,
    now: float,
    event: str,
    what: str,
    first: str,
    state: str,
    stack_name: str | None,
) -> TopicMessage:
    controllers = controllers_of(request.evidence)
    body: list[str | Cuttable] = [first, ""]
    body += facts(
        [
            ("Cluster", request.cluster),
            ("Verdict", request.verdict or None),
            ("Problem", request.kind if request.kind != request.verdict else None),
            ("Severity", incident.severity + _SEVERITY_SCALE),
            ("Detected", utc_minute(now)),
            ("Triggered by", request.run_start.describe(now) if request.run_start else None),
            ("Run reason", request.run_start.reason if request.run_start else None),
            ("Run", request.execution_id),
            ("OpsItem", f"{incident.ops_item_id} ({state})" if incident.ops_item_id else None),
            ("Snapshot", snapshot_summary(request.snapshot)),
        ]
    )
    body += ["", *controller_lines(controllers), ""]
    body += reason_lines("What is wrong (every reason):", request.reasons, request.reasons_left_off)
    if request.error:
        body += ["", "Error:", f"  {request.error.summary(2000)}"]
    links = [
        ("OpsItem", incident.links.ops_item),
        ("Incident Manager", incident.links.incident),
        ("Verification run", incident.links.execution),
    ]
    body += [
        "",
        *next_steps(
            request.cluster,
            region,
            controllers,
            kinds.kind(request.kind).look_at,
            links,
            stack_name=stack_name,
        ),
    ]
    if incident.incident_arn:
        body += ["", f"Incident Manager incident: {incident.incident_arn}"]
    body += ["", "The per-controller evidence is attached to the OpsItem as operational data."]
    return message(
        cluster=request.cluster,
        kind=request.kind,
        event="opened" if event == "opened" else "reminder",
        what=what,
        body=body,
        verdict=request.verdict,
        severity=incident.severity,
    )


def recovered(
    request: ResolveRequest,
    resolved: Sequence[ResolvedIncident],
    execution_link: str | None,
    region: str,
    now: float,
    *,
    stack_name: str | None = None,
) -> tuple[TopicMessage, ...]:
    """A verification found the cluster well and resolved open OpsItems: one message per problem
    resolved, each carrying that problem's dedup key and the most severe severity its OpsItems
    were opened at (a paging service resolves what it triggered; a subscription that got the
    opening gets this too)."""
    by_kind: dict[str, list[ResolvedIncident]] = {}
    for item in resolved:
        by_kind.setdefault(item.kind, []).append(item)
    return tuple(
        _recovered(request, kind, items, execution_link, region, now, stack_name)
        for kind, items in sorted(by_kind.items())
    )


def _recovered(
    request: ResolveRequest,
    kind: str,
    resolved: Sequence[ResolvedIncident],
    execution_link: str | None,
    region: str,
    now: float,
    stack_name: str | None,
) -> TopicMessage:
    severity = min((item.severity for item in resolved), default=kinds.DEFAULT_SEVERITY)
    resolved_lines = tuple(
        f"  - {item.ops_item_id} {item.kind} (sev {item.severity}), "
        f"open since {when(item.opened_at, now) or 'an earlier run'}: {item.link}"
        for item in resolved
    )
    first = f"HyperPod cluster {request.cluster} verified {request.verdict}: {kind} resolved."
    lost = _no_standby(request)
    body = _well(request, now, first + (f" But {lost}." if lost else ""))
    body += ["", "Resolved OpsItems:", Cuttable(resolved_lines), ""]
    body += _well_details(request, region, execution_link, stack_name)
    return message(
        cluster=request.cluster,
        kind="recovered",
        event="resolved",
        what=f"recovered ({request.verdict}): {kind} resolved",
        body=body,
        verdict=request.verdict,
        severity=severity,
        problem=kind,
    )


def verified(
    request: ResolveRequest,
    execution_link: str | None,
    region: str,
    now: float,
    *,
    stack_name: str | None = None,
) -> TopicMessage:
    """The short message when a verification found the cluster well and nothing was open."""
    meaning = _MEANING.get(request.verdict, "the cluster is served")
    first = f"HyperPod cluster {request.cluster} verified {request.verdict}: {meaning}."
    lost = _no_standby(request)
    if lost:
        first += f" But {lost}."
    body = _well(request, now, first)
    body += ["", "No problem was open.", ""]
    body += _well_details(request, region, execution_link, stack_name)
    return message(
        cluster=request.cluster,
        kind="verified",
        event="notice",
        what=f"verified {request.verdict}" + (", no standby ready" if lost else ""),
        body=body,
        verdict=request.verdict,
    )


def _well(request: ResolveRequest, now: float, first: str) -> list[str | Cuttable]:
    return [
        first,
        "",
        *facts(
            [
                ("Cluster", request.cluster),
                ("Verdict", request.verdict),
                ("Checked", utc_minute(now)),
                ("Triggered by", request.run_start.describe(now) if request.run_start else None),
                ("Run reason", request.run_start.reason if request.run_start else None),
                ("Run", request.execution_id),
                ("Snapshot", snapshot_summary(request.snapshot)),
            ]
        ),
    ]


def _well_details(
    request: ResolveRequest, region: str, execution_link: str | None, stack_name: str | None
) -> list[str | Cuttable]:
    controllers = controllers_of(request.evidence)
    body: list[str | Cuttable] = [*controller_lines(controllers), ""]
    body += reason_lines("Why (every reason):", request.reasons, request.reasons_left_off)
    status = on_call_command("status", request.cluster, region, stack_name)
    look = (f"`{status}` (nothing needs doing now)",)
    links = [("Verification run", execution_link)]
    body += [
        "",
        *next_steps(request.cluster, region, controllers, look, links, diagnose=False, stack_name=stack_name),
    ]
    return body
