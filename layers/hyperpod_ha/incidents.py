"""Incidents: one OpsCenter OpsItem per cluster and kind of problem, Incident Manager when
configured, a message on the notification topic, and resolving them when the cluster is well.

Every effect is keyed on something stable so a retried call has no second effect:

- the OpsItem on the dedup string ``hyperpod-ha:<cluster>:<kind>`` (OpsCenter creates no
  second open OpsItem with it, whether it answers with ``OpsItemAlreadyExistsException`` or
  quietly with the existing id);
- the Incident Manager incident on a ``clientToken`` derived from the execution and kind;
- messages on markers kept in the OpsItem's operational data (which execution notified,
  which execution resolved it).

Evidence is redacted (keys that look like secrets, ``key=value`` secrets inside text, URL
credentials) before anything is written, and every operational-data value is bounded.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from botocore.exceptions import ClientError

from hyperpod_ha import notices
from hyperpod_ha.notices import Links, OpenedIncident
from hyperpod_ha.observability import logger
from hyperpod_ha.settings import setting

if TYPE_CHECKING:
    from mypy_boto3_sns import SNSClient
    from mypy_boto3_ssm import SSMClient
    from mypy_boto3_ssm.type_defs import (
        CreateOpsItemRequestTypeDef,
        OpsItemDataValueTypeDef,
        OpsItemFilterTypeDef,
        TagTypeDef,
    )
    from mypy_boto3_ssm_incidents import SSMIncidentsClient
    from mypy_boto3_ssm_incidents.type_defs import RelatedItemTypeDef, TriggerDetailsTypeDef

SOURCE = "hyperpod-ha"
CATEGORY = "Availability"

# OpsCenter limits (CreateOpsItem API reference).
OPERATIONAL_DATA_VALUE_LIMIT = 20 * 1024  # bytes per value
DESCRIPTION_LIMIT = 2048
TITLE_LIMIT = 1024
KEY_LIMIT = 128
# Each evidence entry may be up to 20 KB; this bounds the whole request too.
MAX_EVIDENCE_ENTRIES = 25
# Incident Manager limits (StartIncident).
INCIDENT_TITLE_LIMIT = 200
INCIDENT_RAW_DATA_LIMIT = 10_000

KIND_VERIFICATION_ERROR = "verification-error"
KIND_ROLLOUT_FAILED = "rollout-failed"
# A verified failover says nothing about the database secret on every controller: a
# roll-out failure is only resolved when the caller names it.
KINDS_NOT_RESOLVED_BY_DEFAULT = frozenset({KIND_ROLLOUT_FAILED})

_SEVERITY_BY_VERDICT = {
    "DOWN": "1",
    "SPLIT_BRAIN": "1",
    "UNKNOWN": "2",
    "DEGRADED": "3",
    "FAILED_OVER": "3",
    "HEALTHY": "4",
}
_SEVERITY_BY_KIND = {KIND_VERIFICATION_ERROR: "2", KIND_ROLLOUT_FAILED: "2"}
# A verdict this module does not know is as uncertain as UNKNOWN.
_DEFAULT_SEVERITY = "2"

_HEADLINES = {
    "DOWN": "no Slurm controller is active",
    "SPLIT_BRAIN": "more than one Slurm controller is active",
    "UNKNOWN": "no Slurm controller could be checked",
    "DEGRADED": "the active Slurm controller serves, but something the cluster needs is unhealthy",
    KIND_VERIFICATION_ERROR: "the failover verification itself failed",
    KIND_ROLLOUT_FAILED: "the database secret roll-out to the controllers failed",
}

# Operational-data keys. Custom keys must not start with aws, amazon, amzn or ssm.
DEDUP_KEY = "/aws/dedup"
RESOURCES_KEY = "/aws/resources"
_PREFIX = "hyperpod-ha:"
CLUSTER_KEY = _PREFIX + "cluster"
KIND_KEY = _PREFIX + "kind"
VERDICT_KEY = _PREFIX + "verdict"
EXECUTION_KEY = _PREFIX + "execution"  # the execution that opened the OpsItem
NOTIFIED_KEY = _PREFIX + "notified-execution"  # the last execution whose message went out
INCIDENT_KEY = _PREFIX + "incident"
REASONS_KEY = _PREFIX + "reasons"
ERROR_KEY = _PREFIX + "error"
SNAPSHOT_KEY = _PREFIX + "snapshot"
RESOLVED_BY_KEY = _PREFIX + "resolved-by"
RESOLUTION_KEY = _PREFIX + "resolution"
RECOVERY_NOTIFIED_KEY = _PREFIX + "recovery-notified-execution"
EVIDENCE_PREFIX = _PREFIX + "evidence:"

_KIND = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
# SageMaker HyperPod cluster names.
_CLUSTER = re.compile(r"^[A-Za-z0-9](-*[A-Za-z0-9]){0,62}$")
_CLUSTER_ARN = re.compile(r"^arn:aws[a-z-]*:sagemaker:[a-z0-9-]+:\d{12}:cluster/[A-Za-z0-9-]+$")
_INCIDENT_TRIGGER_ARN = re.compile(r"^arn:aws(-cn|-us-gov)?:[a-z0-9-]*:[a-z0-9-]*:([0-9]{12})?:.+$")
_LABEL_CHARS = re.compile(r"[^A-Za-z0-9_.:/@-]+")

# --- redaction -------------------------------------------------------------------------------

REDACTED = "[redacted]"
_SECRET_KEY = re.compile(
    r"password|passwd|passphrase|secret|token|credential|private[_-]?key|api[_-]?key|authorization|cookie|pass$",
    re.IGNORECASE,
)
# key=value, key: value and "key": "value" forms inside free text (command output, error causes).
# Quantifiers are bounded and anchored so that huge outputs cannot make the scan quadratic.
# Also the escaped form a JSON text inside a JSON string has (\"password\": \"...\").
_ASSIGNMENT = re.compile(r"(?P<key>\b[A-Za-z_][\w.-]{0,63})(?P<sep>\\?[\"']?[ \t]*[:=][ \t]*)")
_VALUE = re.compile(
    r"(?P<quote>\\?\"|')(?:(?!(?P=quote))[^\n]){0,4096}(?P=quote)"  # quoted
    r"|(?P<open>\\?\"|')[^\n]{0,4096}"  # a quote never closed (cut output): up to the line's end
    r"|[^\s\"'\\,;}&]+"
)
_URL_CREDENTIALS = re.compile(
    r"(?P<scheme>\b[a-z][a-z0-9+.-]{0,31}://)(?P<user>[^:/@\s]{1,256}):(?P<password>[^@/\s]{1,1024})@"
)


def scrub_text(text: str) -> str:
    """Remove secrets written inside free text (``StoragePass=...``, ``"password": "..."``, URLs).

    A key that is not a secret is stepped over and the scan goes on inside its value
    (``failed: password=...``, ``"config": "token=..."``); every step moves forward, so
    the scan stays linear in the size of the text.
    """
    kept: list[str] = []
    position = 0
    while match := _ASSIGNMENT.search(text, position):
        kept.append(text[position : match.end()])
        position = match.end()
        if _SECRET_KEY.search(match["key"]) and (value := _VALUE.match(text, position)):
            quote = value["quote"] or value["open"] or ""
            kept += [quote, REDACTED, quote]
            position = value.end()
    kept.append(text[position:])
    return _URL_CREDENTIALS.sub(lambda m: f"{m['scheme']}{m['user']}:{REDACTED}@", "".join(kept))


def redact(value: Any) -> Any:
    """A copy of a JSON-like value with every secret-looking key's value and inline secret removed."""
    if isinstance(value, Mapping):
        return {
            str(key): REDACTED if _SECRET_KEY.search(str(key)) else redact(item)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(item) for item in value]
    if isinstance(value, str):
        return scrub_text(value)
    return value


def bounded(text: str, limit: int = OPERATIONAL_DATA_VALUE_LIMIT) -> str:
    """``text`` cut to ``limit`` UTF-8 bytes, with a note saying so when it was cut."""
    encoded = text.encode("utf-8")
    if len(encoded) <= limit:
        return text
    note = f"\n[truncated by hyperpod-ha: {{kept}} of {len(encoded)} bytes kept; the run's history has all]"
    keep = limit - len(note.format(kept=limit).encode("utf-8"))
    kept = encoded[:keep].decode("utf-8", "ignore")
    return kept + note.format(kept=len(kept.encode("utf-8")))


def _bounded_chars(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    note = " [truncated]"
    return text[: limit - len(note)] + note


# --- requests and results --------------------------------------------------------------------


class InvalidIncidentRequest(ValueError):
    """The incident request is malformed. The reason is safe to log."""


class IncidentFailed(Exception):
    """OpsCenter or SNS refused a call we cannot do without. The reason is safe to log."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _text(event: Mapping[str, Any], name: str, *, required: bool = True) -> str:
    value = event.get(name)
    if value is None or value == "":
        if required:
            raise InvalidIncidentRequest(f"{name} is required")
        return ""
    if not isinstance(value, str):
        raise InvalidIncidentRequest(f"{name} must be a string")
    return value.strip()


def _cluster(value: str) -> str:
    if not _CLUSTER.match(value):
        raise InvalidIncidentRequest("cluster is not a HyperPod cluster name")
    return value


def _kind(value: str) -> str:
    if not value:
        raise InvalidIncidentRequest("verdict or kind is required")
    if not _KIND.match(value):
        raise InvalidIncidentRequest("kind must be 1-64 letters, digits, '_', '.' or '-'")
    return value


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
        return _bounded_chars(scrub_text(f"{self.error}: {self.cause}" if self.cause else self.error), limit)


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

    @classmethod
    def from_event(cls, event: Mapping[str, Any]) -> OpenRequest:
        cluster = _cluster(_text(event, "cluster"))
        verdict = _text(event, "verdict", required=False)
        kind = _kind(_text(event, "kind", required=False) or verdict)
        reasons = event.get("reasons") or []
        if not isinstance(reasons, list):
            raise InvalidIncidentRequest("reasons must be a list of strings")
        evidence = event.get("evidence") or {}
        if isinstance(evidence, list):
            evidence = {"reports": evidence}
        if not isinstance(evidence, Mapping):
            raise InvalidIncidentRequest("evidence must be an object")
        error = event.get("error")
        if error is not None and not isinstance(error, Mapping):
            raise InvalidIncidentRequest("error must be an object with Error and Cause")
        return cls(
            cluster=cluster,
            verdict=verdict,
            kind=kind,
            execution_id=_text(event, "execution_id"),
            reasons=tuple(scrub_text(str(reason)) for reason in reasons),
            evidence=redact(evidence),
            error=WorkflowError(str(error.get("Error") or "Error"), str(error.get("Cause") or ""))
            if error
            else None,
            cluster_arn=_cluster_arn(event, evidence),
            snapshot=_snapshot(event),
        )


@dataclass(frozen=True)
class ResolveRequest:
    cluster: str
    verdict: str
    execution_id: str
    # None: every kind but those in KINDS_NOT_RESOLVED_BY_DEFAULT.
    kinds: frozenset[str] | None = None
    snapshot: Mapping[str, Any] | None = None

    @classmethod
    def from_event(cls, event: Mapping[str, Any]) -> ResolveRequest:
        kinds = event.get("kinds")
        if kinds is not None and not (isinstance(kinds, list) and all(isinstance(k, str) for k in kinds)):
            raise InvalidIncidentRequest("kinds must be a list of strings")
        return cls(
            cluster=_cluster(_text(event, "cluster")),
            verdict=_text(event, "verdict"),
            execution_id=_text(event, "execution_id"),
            kinds=frozenset(_kind(kind) for kind in kinds) if kinds is not None else None,
            snapshot=_snapshot(event),
        )

    def covers(self, kind: str | None) -> bool:
        if self.kinds is not None:
            return kind in self.kinds
        return kind not in KINDS_NOT_RESOLVED_BY_DEFAULT


@dataclass(frozen=True)
class IncidentSettings:
    region: str
    topic_arn: str | None = None
    response_plan_arn: str | None = None

    @classmethod
    def from_environment(cls) -> IncidentSettings:
        return cls(
            region=setting("AWS_REGION", os.environ.get("AWS_DEFAULT_REGION", "us-east-1")),
            topic_arn=setting("NOTIFICATION_TOPIC_ARN", "").strip() or None,
            response_plan_arn=setting("INCIDENT_RESPONSE_PLAN_ARN", "").strip() or None,
        )


@dataclass(frozen=True)
class OpenResult:
    ops_item_id: str | None
    created: bool
    incident_arn: str | None
    notified: bool
    links: Links
    incident_error: str | None = None

    def to_json(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "ops_item_id": self.ops_item_id,
            "created": self.created,
            "incident_arn": self.incident_arn,
            "notified": self.notified,
            "links": self.links.to_json(),
        }
        if self.incident_error:
            result["incident_error"] = self.incident_error
        return result


@dataclass(frozen=True)
class ResolveResult:
    resolved: tuple[str, ...]
    notified: bool
    message: Literal["recovered", "verified"] | None

    def to_json(self) -> dict[str, Any]:
        return {"resolved": list(self.resolved), "notified": self.notified, "message": self.message}


# --- pure decisions --------------------------------------------------------------------------


def severity_for(verdict: str, kind: str) -> str:
    """OpsCenter severity: "1" (critical) .. "4" (low)."""
    if kind in _SEVERITY_BY_KIND:
        return _SEVERITY_BY_KIND[kind]
    return _SEVERITY_BY_VERDICT.get(verdict, _DEFAULT_SEVERITY)


def dedup_string(cluster: str, kind: str) -> str:
    return f"{SOURCE}:{cluster}:{kind}"


def incident_client_token(execution_id: str, kind: str) -> str:
    digest = hashlib.sha256(f"incident\n{execution_id}\n{kind}".encode()).hexdigest()
    return f"{SOURCE}-{digest[:48]}"


def title_for(request: OpenRequest) -> str:
    headline = _HEADLINES.get(request.kind) or _HEADLINES.get(request.verdict)
    if headline is None:
        headline = f"failover verification found {request.kind}"
    label = f" ({request.verdict})" if request.verdict and request.kind == request.verdict else ""
    return _bounded_chars(f"HyperPod cluster {request.cluster}: {headline}{label}", TITLE_LIMIT)


def description_for(request: OpenRequest) -> str:
    lines = [
        f"hyperpod-ha found a problem on HyperPod cluster {request.cluster}.",
        f"Verdict: {request.verdict or '-'}; problem: {request.kind}.",
        "",
        "Reasons:",
        *([f"- {reason}" for reason in request.reasons] or ["- (no reason given)"]),
    ]
    if request.error:
        lines += ["", f"Error: {request.error.summary(600)}"]
    lines += ["", f"Verification run: {request.execution_id}", "Evidence: see the operational data."]
    return _bounded_chars("\n".join(lines), DESCRIPTION_LIMIT)


def _evidence_label(item: Mapping[str, Any], index: int) -> str:
    for name in ("host", "controller", "hostname", "instance_id", "name"):
        value = item.get(name)
        if isinstance(value, str) and value:
            return value
    return str(index)


def _evidence_entries(evidence: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """One entry per report: top-level keys, with lists of reports split per controller."""
    entries: list[tuple[str, Any]] = []
    for key, value in evidence.items():
        if isinstance(value, list) and value and all(isinstance(item, Mapping) for item in value):
            entries += [(f"{key}:{_evidence_label(item, i)}", item) for i, item in enumerate(value)]
        else:
            entries.append((str(key), value))
    return entries


def _evidence_key(label: str, taken: set[str]) -> str:
    base = EVIDENCE_PREFIX + (_LABEL_CHARS.sub("_", label).strip("_") or "entry")
    key = base[:KEY_LIMIT]
    counter = 2
    while key in taken:
        suffix = f"#{counter}"
        key = base[: KEY_LIMIT - len(suffix)] + suffix
        counter += 1
    taken.add(key)
    return key


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)


def operational_data(request: OpenRequest) -> dict[str, OpsItemDataValueTypeDef]:
    """The OpsItem's operational data: dedup, related resource, markers and bounded evidence.

    ``request`` is already redacted; searchable values are the ones operators filter on.
    """
    data: dict[str, OpsItemDataValueTypeDef] = {
        DEDUP_KEY: {
            "Type": "SearchableString",
            "Value": _json({"dedupString": dedup_string(request.cluster, request.kind)}),
        },
        CLUSTER_KEY: {"Type": "SearchableString", "Value": request.cluster},
        KIND_KEY: {"Type": "SearchableString", "Value": request.kind},
        EXECUTION_KEY: {"Type": "SearchableString", "Value": bounded(request.execution_id)},
    }
    if request.verdict:
        data[VERDICT_KEY] = {"Type": "SearchableString", "Value": request.verdict}
    if request.cluster_arn:
        # The related-resources list of the OpsItem; RelatedOpsItems only links OpsItems.
        data[RESOURCES_KEY] = {"Type": "SearchableString", "Value": _json([{"arn": request.cluster_arn}])}
    if request.reasons:
        data[REASONS_KEY] = {"Type": "String", "Value": bounded(_json(list(request.reasons)))}
    if request.snapshot:
        data[SNAPSHOT_KEY] = {"Type": "String", "Value": bounded(_json(request.snapshot))}
    if request.error:
        data[ERROR_KEY] = {
            "Type": "String",
            "Value": request.error.summary(OPERATIONAL_DATA_VALUE_LIMIT // 2),
        }
    taken: set[str] = set()
    entries = _evidence_entries(request.evidence)
    for label, value in entries[:MAX_EVIDENCE_ENTRIES]:
        text = bounded(value if isinstance(value, str) else _json(value))
        if text.strip():
            data[_evidence_key(label, taken)] = {"Type": "String", "Value": text}
    if len(entries) > MAX_EVIDENCE_ENTRIES:
        rest = [label for label, _ in entries[MAX_EVIDENCE_ENTRIES:]]
        note = {"note": f"{len(rest)} more evidence entries are in the execution history", "entries": rest}
        data[_evidence_key("more", taken)] = {"Type": "String", "Value": bounded(_json(note))}
    return data


def ops_item_tags(cluster: str) -> list[TagTypeDef]:
    """The tags every OpsItem of ours carries: IAM lets this stack create OpsItems only with
    them and update only OpsItems that have them (see the README, IAM)."""
    return [{"Key": "created-by", "Value": SOURCE}, {"Key": "cluster", "Value": cluster}]


def ops_item_request(request: OpenRequest) -> CreateOpsItemRequestTypeDef:
    severity = severity_for(request.verdict, request.kind)
    return {
        "Title": title_for(request),
        "Description": description_for(request),
        "Source": SOURCE,
        "Severity": severity,
        "Priority": int(severity),
        "Category": CATEGORY,
        "OperationalData": operational_data(request),
        "Tags": ops_item_tags(request.cluster),
    }


def _data_value(data: Mapping[str, Any] | None, key: str) -> str | None:
    entry = (data or {}).get(key)
    if isinstance(entry, Mapping):
        value = entry.get("Value")
        return value if isinstance(value, str) and value else None
    return None


def _error_code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", "Unknown"))


# --- the adapter -----------------------------------------------------------------------------


class Incidents:
    """Opens and resolves this project's incidents. Clients are passed in (created once per container)."""

    def __init__(
        self,
        ssm: SSMClient,
        sns: SNSClient,
        settings: IncidentSettings,
        incident_manager: SSMIncidentsClient | None = None,
    ) -> None:
        self.ssm = ssm
        self.sns = sns
        self.settings = settings
        self.incident_manager = incident_manager

    # --- open ---

    def open(self, request: OpenRequest) -> OpenResult:
        region = self.settings.region
        create = ops_item_request(request)
        ops_item_id = self._create_ops_item(request, create)
        item = self._get_ops_item(ops_item_id)
        data = item.get("OperationalData") or {}
        # Our own execution opened it (now, or on an earlier attempt of this same call).
        created = _data_value(data, EXECUTION_KEY) == request.execution_id
        partition = notices.partition_of(request.execution_id)
        links = Links(
            execution=notices.execution_console_url(request.execution_id, region),
            ops_item=notices.ops_item_console_url(ops_item_id, region, partition),
        )
        updates: dict[str, OpsItemDataValueTypeDef] = {}
        incident_arn = _data_value(data, INCIDENT_KEY)
        incident_error: str | None = None
        if created and incident_arn is None and self.settings.response_plan_arn and self.incident_manager:
            incident_arn, incident_error = self._start_incident(request, create, ops_item_id, links)
            if incident_arn:
                updates[INCIDENT_KEY] = {"Type": "SearchableString", "Value": incident_arn}
        if incident_arn:
            links = Links(links.execution, links.ops_item, notices.incident_console_url(region, partition))

        notified = _data_value(data, NOTIFIED_KEY) == request.execution_id
        if not notified and self.settings.topic_arn:
            message = notices.incident_opened(
                OpenedIncident(
                    cluster=request.cluster,
                    verdict=request.verdict,
                    kind=request.kind,
                    severity=create["Severity"],
                    title=create["Title"],
                    reasons=request.reasons,
                    error=request.error.summary(2000) if request.error else None,
                    ops_item_id=ops_item_id,
                    created=created,
                    execution_id=request.execution_id,
                    incident_arn=incident_arn,
                    links=links,
                    snapshot=notices.snapshot_summary(request.snapshot),
                )
            )
            self._publish(message)
            notified = True
            updates[NOTIFIED_KEY] = {"Type": "SearchableString", "Value": bounded(request.execution_id)}
        elif not self.settings.topic_arn:
            logger.warning(
                "no notification topic configured; incident not announced", extra={"ops_item": ops_item_id}
            )
        if updates:
            self._update(ops_item_id, updates)
        logger.info(
            "incident open",
            extra={
                "cluster": request.cluster,
                "kind": request.kind,
                "ops_item": ops_item_id,
                "opened_now": created,
            },
        )
        return OpenResult(ops_item_id, created, incident_arn, notified, links, incident_error)

    def _create_ops_item(self, request: OpenRequest, create: CreateOpsItemRequestTypeDef) -> str:
        try:
            response = self.ssm.create_ops_item(**create)
        except ClientError as error:
            if _error_code(error) != "OpsItemAlreadyExistsException":
                raise IncidentFailed(f"CreateOpsItem failed: {_error_code(error)}") from error
            existing = error.response.get("OpsItemId")
            if isinstance(existing, str) and existing:
                return existing
            # The dedup hit did not name the OpsItem: find the open one for this cluster and kind.
            found = [
                s
                for s in self._find(request.cluster, ("Open", "InProgress"))
                if _data_value(s.get("OperationalData"), KIND_KEY) == request.kind
            ]
            if not found:
                raise IncidentFailed(
                    "CreateOpsItem reported a duplicate but no open OpsItem was found"
                ) from error
            return str(found[0]["OpsItemId"])
        return response["OpsItemId"]

    def _get_ops_item(self, ops_item_id: str) -> Mapping[str, Any]:
        try:
            return self.ssm.get_ops_item(OpsItemId=ops_item_id)["OpsItem"]
        except ClientError as error:
            raise IncidentFailed(f"GetOpsItem {ops_item_id} failed: {_error_code(error)}") from error

    def _update(self, ops_item_id: str, data: Mapping[str, OpsItemDataValueTypeDef], **fields: Any) -> None:
        try:
            self.ssm.update_ops_item(OpsItemId=ops_item_id, OperationalData=dict(data), **fields)
        except ClientError as error:
            raise IncidentFailed(f"UpdateOpsItem {ops_item_id} failed: {_error_code(error)}") from error

    def _publish(self, message: notices.Notification) -> None:
        assert self.settings.topic_arn
        try:
            notices.publish(self.sns, self.settings.topic_arn, message)
        except ClientError as error:
            raise IncidentFailed(f"SNS Publish failed: {_error_code(error)}") from error

    def _start_incident(
        self, request: OpenRequest, create: CreateOpsItemRequestTypeDef, ops_item_id: str, links: Links
    ) -> tuple[str | None, str | None]:
        """Start the Incident Manager incident; its failure is reported, not raised (the OpsItem stands)."""
        assert self.incident_manager
        assert self.settings.response_plan_arn
        raw = {
            "cluster": request.cluster,
            "verdict": request.verdict,
            "kind": request.kind,
            "ops_item_id": ops_item_id,
            "reasons": list(request.reasons),
        }
        trigger: TriggerDetailsTypeDef = {
            "source": SOURCE,
            "timestamp": datetime.now(UTC),
            "rawData": _bounded_chars(_json(raw), INCIDENT_RAW_DATA_LIMIT),
        }
        if _INCIDENT_TRIGGER_ARN.match(request.execution_id):
            trigger["triggerArn"] = request.execution_id
        related: list[RelatedItemTypeDef] = []
        if links.ops_item:
            related.append(
                {
                    "identifier": {"type": "OTHER", "value": {"url": links.ops_item}},
                    "title": f"OpsCenter {ops_item_id}",
                }
            )
        if links.execution:
            related.append(
                {
                    "identifier": {"type": "OTHER", "value": {"url": links.execution}},
                    "title": "Verification run",
                }
            )
        try:
            response = self.incident_manager.start_incident(
                responsePlanArn=self.settings.response_plan_arn,
                clientToken=incident_client_token(request.execution_id, request.kind),
                title=_bounded_chars(create["Title"], INCIDENT_TITLE_LIMIT),
                impact=int(create["Severity"]),
                triggerDetails=trigger,
                relatedItems=related,
            )
        except ClientError as error:
            reason = f"StartIncident failed: {_error_code(error)}"
            logger.error(
                "incident manager refused the incident", extra={"reason": reason, "ops_item": ops_item_id}
            )
            return None, reason
        return response["incidentRecordArn"], None

    # --- resolve ---

    def _find(self, cluster: str, statuses: Sequence[str], **markers: str) -> list[Mapping[str, Any]]:
        """This project's OpsItems for ``cluster`` in ``statuses``, optionally with marker values."""
        filters: list[OpsItemFilterTypeDef] = [
            {"Key": "Source", "Values": [SOURCE], "Operator": "Equal"},
            {"Key": "Status", "Values": list(statuses), "Operator": "Equal"},
            {
                "Key": "OperationalData",
                "Values": [_json({"key": CLUSTER_KEY, "value": cluster})],
                "Operator": "Equal",
            },
        ]
        for key, value in markers.items():
            filters.append(
                {
                    "Key": "OperationalData",
                    "Values": [_json({"key": key, "value": value})],
                    "Operator": "Equal",
                }
            )
        found: list[Mapping[str, Any]] = []
        try:
            for page in self.ssm.get_paginator("describe_ops_items").paginate(OpsItemFilters=filters):
                found += page.get("OpsItemSummaries", [])
        except ClientError as error:
            raise IncidentFailed(f"DescribeOpsItems failed: {_error_code(error)}") from error
        # Never touch an OpsItem that is not ours, whatever the filters matched.
        return [
            summary
            for summary in found
            if summary.get("Source") == SOURCE
            and summary.get("Status") in statuses
            and _data_value(summary.get("OperationalData"), CLUSTER_KEY) == cluster
            and all(
                _data_value(summary.get("OperationalData"), key) == value for key, value in markers.items()
            )
        ]

    def resolve(
        self, request: ResolveRequest, announce_verified: Callable[[ResolveRequest], bool] | None = None
    ) -> ResolveResult:
        """Resolve the cluster's open OpsItems; say "recovered" once, or "verified" when nothing was open.

        ``announce_verified`` sends the "verified" message; the handler passes one made
        idempotent by Powertools, since nothing in OpsCenter records that message.
        """
        by_us = {RESOLVED_BY_KEY: request.execution_id}
        # An earlier attempt of this same call may have resolved some already.
        earlier = [s for s in self._find(request.cluster, ("Resolved",), **by_us) if self._covers(request, s)]
        still_open = [
            s for s in self._find(request.cluster, ("Open", "InProgress")) if self._covers(request, s)
        ]
        note = (
            f"Resolved by hyperpod-ha: verification run {request.execution_id} found cluster "
            f"{request.cluster} {request.verdict}."
        )
        for summary in still_open:
            self._update(
                str(summary["OpsItemId"]),
                {
                    RESOLVED_BY_KEY: {"Type": "SearchableString", "Value": bounded(request.execution_id)},
                    RESOLUTION_KEY: {"Type": "String", "Value": bounded(note)},
                },
                Status="Resolved",
            )
        resolved = tuple(sorted({str(s["OpsItemId"]) for s in [*earlier, *still_open]}))
        if not resolved:
            notified = (announce_verified or self.announce_verified)(request)
            return ResolveResult((), notified, "verified" if notified else None)

        already = [
            str(s["OpsItemId"])
            for s in earlier
            if _data_value(s.get("OperationalData"), RECOVERY_NOTIFIED_KEY) == request.execution_id
        ]
        if already:
            return ResolveResult(resolved, True, "recovered")
        if not self.settings.topic_arn:
            logger.warning("no notification topic configured; recovery not announced")
            return ResolveResult(resolved, False, None)
        region = self.settings.region
        partition = notices.partition_of(request.execution_id)
        self._publish(
            notices.recovered(
                request.cluster,
                request.verdict,
                request.execution_id,
                {item: notices.ops_item_console_url(item, region, partition) for item in resolved},
                notices.execution_console_url(request.execution_id, region),
                snapshot=notices.snapshot_summary(request.snapshot),
            )
        )
        for ops_item in resolved:
            self._update(
                ops_item,
                {RECOVERY_NOTIFIED_KEY: {"Type": "SearchableString", "Value": bounded(request.execution_id)}},
            )
        logger.info("incidents resolved", extra={"cluster": request.cluster, "resolved": list(resolved)})
        return ResolveResult(resolved, True, "recovered")

    @staticmethod
    def _covers(request: ResolveRequest, summary: Mapping[str, Any]) -> bool:
        return request.covers(_data_value(summary.get("OperationalData"), KIND_KEY))

    def announce_verified(self, request: ResolveRequest) -> bool:
        """Publish the short "verified" message (not idempotent by itself: see :meth:`resolve`)."""
        if not self.settings.topic_arn:
            return False
        link = notices.execution_console_url(request.execution_id, self.settings.region)
        self._publish(
            notices.verified(
                request.cluster,
                request.verdict,
                request.execution_id,
                link,
                snapshot=notices.snapshot_summary(request.snapshot),
            )
        )
        return True
