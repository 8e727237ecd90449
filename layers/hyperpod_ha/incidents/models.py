"""What IncidentFunction is asked (open, resolve, note), read from the event and redacted, and
what it answers."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from hyperpod_ha.incidents.errors import InvalidIncidentRequest
from hyperpod_ha.incidents.keys import KINDS_NOT_RESOLVED_BY_DEFAULT
from hyperpod_ha.incidents.limits import bounded_chars
from hyperpod_ha.redaction import redact, scrub_text
from hyperpod_ha.request_fields import bounded_id, bounded_text, is_cluster_name, text_field
from hyperpod_ha.topic_messages import Links
from hyperpod_ha.topic_messages.sections import RunStart

# A verdict gives a handful of reasons; each is cut to an excerpt (request_fields' bound).
MAX_REASONS = 32
# A note names the incidents it goes on (redundancy-lost and the verdict's) and says what a
# restore did in a few lines: one per action (at most 10) and per command left to a person.
MAX_NOTE_KINDS = 4
MAX_NOTE_LINES = 32
NOTE_LINE_CHARS = 512
# Written in place of a line that, redacted, still reads as a secret once in JSON: OpsCenter's
# writes scrub every value again, which would cut into the JSON around it.
WITHHELD_LINE = "[a line withheld by hyperpod-ha: it may hold a secret; the execution history has it]"
_KIND = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_EXECUTION_ARN = re.compile(
    r"^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:execution:[A-Za-z0-9_.-]{1,80}:[A-Za-z0-9_.-]{1,80}$"
)
_CLUSTER_ARN = re.compile(r"^arn:aws[a-z-]*:sagemaker:[a-z0-9-]+:\d{12}:cluster/[A-Za-z0-9-]+$")


_text = partial(text_field, rejected=InvalidIncidentRequest)
# At most MAX_ID_CHARS: an execution id is an ARN.
_id = partial(bounded_id, name="execution_id", rejected=InvalidIncidentRequest)


def _cluster(value: str) -> str:
    if not is_cluster_name(value):
        raise InvalidIncidentRequest("cluster is not a HyperPod cluster name")
    return value


def _kind(value: str) -> str:
    if not value:
        raise InvalidIncidentRequest("verdict or kind is required")
    if not _KIND.match(value):
        raise InvalidIncidentRequest("kind must be 1-64 letters, digits, '_', '.' or '-'")
    return value


def _reasons(event: Mapping[str, Any]) -> tuple[tuple[str, ...], int]:
    """The request's reasons (each redacted and cut to an excerpt) and how many were left off."""
    reasons = event.get("reasons") or []
    if not isinstance(reasons, list):
        raise InvalidIncidentRequest("reasons must be a list of strings")
    kept = tuple(bounded_text(scrub_text(str(reason))) for reason in reasons[:MAX_REASONS])
    return kept, max(len(reasons) - MAX_REASONS, 0)


def _reason_codes(event: Mapping[str, Any], reasons: tuple[str, ...]) -> tuple[str, ...]:
    """The verdict's reason codes, one per kept reason (``()`` when the request gives none)."""
    codes = event.get("reason_codes")
    if codes is None:
        return ()
    if not isinstance(codes, list) or not all(isinstance(c, str) and _KIND.match(c) for c in codes):
        raise InvalidIncidentRequest("reason_codes must be a list of codes (letters, digits, '_', '.', '-')")
    if len(codes[:MAX_REASONS]) != len(reasons):
        raise InvalidIncidentRequest("reason_codes must give one code per reason")
    return tuple(codes[:MAX_REASONS])


def _evidence(event: Mapping[str, Any]) -> Mapping[str, Any]:
    evidence = event.get("evidence") or {}
    if isinstance(evidence, list):
        evidence = {"reports": evidence}
    if not isinstance(evidence, Mapping):
        raise InvalidIncidentRequest("evidence must be an object")
    return evidence


def _run_start(event: Mapping[str, Any]) -> RunStart | None:
    """How the run began (its input's trigger, start and reason), each field bounded."""
    return RunStart.from_json(event.get("trigger"), event.get("started_at"), event.get("run_reason"))


def _snapshot(event: Mapping[str, Any]) -> Mapping[str, Any] | None:
    snapshot = event.get("snapshot")
    if snapshot is not None and not isinstance(snapshot, Mapping):
        raise InvalidIncidentRequest("snapshot must be an object")
    return redact(snapshot) if snapshot else None


def _cluster_arn(event: Mapping[str, Any], evidence: Mapping[str, Any]) -> str | None:
    """The cluster's ARN from the request, or from the evidence (discovery reports carry it)."""
    candidates: list[Any] = [
        event.get("cluster_arn"),
        evidence.get("cluster_arn"),
        evidence.get("ClusterArn"),
    ]
    candidates += [item.get("cluster_arn") for item in evidence.values() if isinstance(item, Mapping)]
    for candidate in candidates:
        if isinstance(candidate, str) and _CLUSTER_ARN.match(candidate):
            return candidate
    return None


@dataclass(frozen=True)
class WorkflowError:
    error: str
    cause: str

    def summary(self, limit: int) -> str:
        return bounded_chars(scrub_text(f"{self.error}: {self.cause}" if self.cause else self.error), limit)


@dataclass(frozen=True)
class OpenRequest:
    cluster: str
    verdict: str
    kind: str
    execution_id: str
    reasons: tuple[str, ...] = ()
    evidence: Mapping[str, Any] = field(default_factory=dict)
    error: WorkflowError | None = None
    cluster_arn: str | None = None
    # The run's snapshot (SnapshotStateFunction's result), when the workflow took one.
    snapshot: Mapping[str, Any] | None = None
    # What started the run, for the message ("triggered by ..."); None for a direct request.
    run_start: RunStart | None = None
    # The verdict's one-line problem (DEGRADED: what is unhealthy, on whom).
    problem: str = ""
    reasons_left_off: int = 0

    @classmethod
    def from_event(cls, event: Mapping[str, Any]) -> OpenRequest:
        cluster = _cluster(_text(event, "cluster"))
        verdict = _text(event, "verdict", required=False)
        kind = _kind(_text(event, "kind", required=False) or verdict)
        reasons, left_off = _reasons(event)
        evidence = _evidence(event)
        error = event.get("error")
        if error is not None and not isinstance(error, Mapping):
            raise InvalidIncidentRequest("error must be an object with Error and Cause")
        return cls(
            cluster=cluster,
            verdict=verdict,
            kind=kind,
            execution_id=_id(_text(event, "execution_id")),
            reasons=reasons,
            evidence=redact(evidence),
            error=WorkflowError(str(error.get("Error") or "Error"), str(error.get("Cause") or ""))
            if error
            else None,
            cluster_arn=_cluster_arn(event, evidence),
            snapshot=_snapshot(event),
            run_start=_run_start(event),
            problem=scrub_text(_text(event, "problem", required=False, limit=1024)),
            reasons_left_off=left_off,
        )


@dataclass(frozen=True)
class ResolveRequest:
    cluster: str
    verdict: str
    execution_id: str
    # None: every kind but those in KINDS_NOT_RESOLVED_BY_DEFAULT.
    kinds: frozenset[str] | None = None
    snapshot: Mapping[str, Any] | None = None
    # What the message says beside the verdict: why the cluster is well, its controllers, the trigger.
    reasons: tuple[str, ...] = ()
    evidence: Mapping[str, Any] = field(default_factory=dict)
    run_start: RunStart | None = None
    reasons_left_off: int = 0
    # The verdict's reason codes, one per reason (hyperpod_ha.verdict.reasons); () when not given.
    reason_codes: tuple[str, ...] = ()

    @classmethod
    def from_event(cls, event: Mapping[str, Any]) -> ResolveRequest:
        kinds = event.get("kinds")
        if kinds is not None and not (isinstance(kinds, list) and all(isinstance(k, str) for k in kinds)):
            raise InvalidIncidentRequest("kinds must be a list of strings")
        reasons, left_off = _reasons(event)
        return cls(
            cluster=_cluster(_text(event, "cluster")),
            verdict=_text(event, "verdict"),
            execution_id=_id(_text(event, "execution_id")),
            kinds=frozenset(_kind(kind) for kind in kinds) if kinds is not None else None,
            snapshot=_snapshot(event),
            reasons=reasons,
            evidence=redact(_evidence(event)),
            run_start=_run_start(event),
            reasons_left_off=left_off,
            reason_codes=_reason_codes(event, reasons),
        )

    def to_event(self) -> dict[str, Any]:
        """The request as an event :meth:`from_event` reads back (the "verified" message's
        idempotent call takes JSON)."""
        event: dict[str, Any] = {
            "cluster": self.cluster,
            "verdict": self.verdict,
            "execution_id": self.execution_id,
            "snapshot": dict(self.snapshot) if self.snapshot else None,
            "reasons": list(self.reasons),
            "evidence": dict(self.evidence),
        }
        if self.reason_codes:
            event["reason_codes"] = list(self.reason_codes)
        if self.kinds is not None:
            event["kinds"] = sorted(self.kinds)
        if self.run_start is not None:
            event.update(self.run_start.to_event())
        return event

    def covers(self, kind: str | None) -> bool:
        if self.kinds is not None:
            return kind in self.kinds
        return kind not in KINDS_NOT_RESOLVED_BY_DEFAULT


def _execution_arn(value: str) -> str:
    """A note comes from a restore's execution: its ARN, nothing else (the entry's key)."""
    if not _EXECUTION_ARN.match(value):
        raise InvalidIncidentRequest("execution_id must be a Step Functions execution ARN")
    return value


def _note_line(value: object) -> str:
    if not isinstance(value, str):
        raise InvalidIncidentRequest("lines must be a list of strings")
    line = bounded_chars(scrub_text(value.strip()), NOTE_LINE_CHARS)
    encoded = json.dumps(line, ensure_ascii=False)  # as the OpsItem's JSON value holds it
    return line if scrub_text(encoded) == encoded else WITHHELD_LINE


@dataclass(frozen=True)
class NoteRequest:
    """Lines to add to the cluster's open incidents of ``kinds`` (a restore's actions, or that
    restoring stopped), once per execution."""

    cluster: str
    kinds: frozenset[str]
    execution_id: str
    lines: tuple[str, ...]

    @classmethod
    def from_event(cls, event: Mapping[str, Any]) -> NoteRequest:
        kinds, lines = event.get("kinds"), event.get("lines")
        if not (isinstance(kinds, list) and 0 < len(kinds) <= MAX_NOTE_KINDS):
            raise InvalidIncidentRequest(f"kinds must be a list of 1-{MAX_NOTE_KINDS} kinds")
        if not all(isinstance(kind, str) for kind in kinds):
            raise InvalidIncidentRequest("kinds must be a list of strings")
        if not (isinstance(lines, list) and 0 < len(lines) <= MAX_NOTE_LINES):
            raise InvalidIncidentRequest(f"lines must be a list of 1-{MAX_NOTE_LINES} strings")
        return cls(
            cluster=_cluster(_text(event, "cluster")),
            kinds=frozenset(_kind(kind) for kind in kinds),
            execution_id=_execution_arn(_id(_text(event, "execution_id"))),
            lines=tuple(_note_line(line) for line in lines),
        )


@dataclass(frozen=True)
class NoteResult:
    noted: tuple[str, ...]  # the OpsItems that carry the note

    def to_json(self) -> dict[str, Any]:
        return {"noted": list(self.noted)}


# What an open request told people: the incident opened, a reminder, or nothing (already told
# by this run, a reminder not due, no topic).
OpenMessage = Literal["opened", "reminder"]


@dataclass(frozen=True)
class OpenResult:
    ops_item_id: str | None
    created: bool
    incident_arn: str | None
    notified: bool
    links: Links
    incident_error: str | None = None
    message: OpenMessage | None = None
    # The operator's silence in force (hyperpod_ha.silences): nothing opened, nothing told.
    silenced: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "ops_item_id": self.ops_item_id,
            "created": self.created,
            "incident_arn": self.incident_arn,
            "notified": self.notified,
            "message": self.message,
            "links": self.links.to_json(),
        }
        if self.incident_error:
            result["incident_error"] = self.incident_error
        if self.silenced is not None:
            result["silenced"] = dict(self.silenced)
        return result


@dataclass(frozen=True)
class ResolveResult:
    resolved: tuple[str, ...]
    notified: bool
    message: Literal["recovered", "verified"] | None

    def to_json(self) -> dict[str, Any]:
        return {"resolved": list(self.resolved), "notified": self.notified, "message": self.message}
