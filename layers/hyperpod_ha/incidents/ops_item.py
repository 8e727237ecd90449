"""The OpsItem an open request becomes: severity, title, description, tags and operational data
(dedup, related resource, markers, bounded evidence). Pure: no AWS call."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hyperpod_ha.incidents.keys import (
    CATEGORY,
    CLUSTER_KEY,
    DEDUP_KEY,
    ERROR_KEY,
    EVIDENCE_PREFIX,
    EXECUTION_KEY,
    KIND_KEY,
    REASONS_KEY,
    RESOURCES_KEY,
    SNAPSHOT_KEY,
    SOURCE,
    VERDICT_KEY,
    dedup_string,
)
from hyperpod_ha.incidents.limits import (
    DESCRIPTION_LIMIT,
    KEY_LIMIT,
    MAX_EVIDENCE_ENTRIES,
    OPERATIONAL_DATA_VALUE_LIMIT,
    TITLE_LIMIT,
    bounded,
    bounded_chars,
)
from hyperpod_ha.incidents.messages import headline
from hyperpod_ha.topic_messages import kinds

if TYPE_CHECKING:
    from mypy_boto3_ssm.type_defs import CreateOpsItemRequestTypeDef, OpsItemDataValueTypeDef, TagTypeDef

    from hyperpod_ha.incidents.models import OpenRequest

_LABEL_CHARS = re.compile(r"[^A-Za-z0-9_.:/@-]+")


def as_json(value: Any) -> str:
    """The one JSON form of values we write and filter on (keys sorted, so filters match)."""
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)


def severity_for(verdict: str, kind: str) -> str:
    """OpsCenter severity: "1" (critical) .. "4" (low), the kind's row
    (:mod:`hyperpod_ha.topic_messages.kinds`)."""
    return kinds.severity_of(kind, verdict)


def title_for(request: OpenRequest) -> str:
    """``HyperPod cluster ml: DOWN: no Slurm controller is active``: the messages' headline."""
    return bounded_chars(f"HyperPod cluster {request.cluster}: {headline(request)}", TITLE_LIMIT)


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
    return bounded_chars("\n".join(lines), DESCRIPTION_LIMIT)


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


def operational_data(request: OpenRequest) -> dict[str, OpsItemDataValueTypeDef]:
    """The OpsItem's operational data: dedup, related resource, markers and bounded evidence.

    ``request`` is already redacted; searchable values are the ones operators filter on.
    """
    data: dict[str, OpsItemDataValueTypeDef] = {
        DEDUP_KEY: {
            "Type": "SearchableString",
            "Value": as_json({"dedupString": dedup_string(request.cluster, request.kind)}),
        },
        CLUSTER_KEY: {"Type": "SearchableString", "Value": request.cluster},
        KIND_KEY: {"Type": "SearchableString", "Value": request.kind},
        EXECUTION_KEY: {"Type": "SearchableString", "Value": bounded(request.execution_id)},
    }
    if request.verdict:
        data[VERDICT_KEY] = {"Type": "SearchableString", "Value": request.verdict}
    if request.cluster_arn:
        # The related-resources list of the OpsItem; RelatedOpsItems only links OpsItems.
        data[RESOURCES_KEY] = {"Type": "SearchableString", "Value": as_json([{"arn": request.cluster_arn}])}
    if request.reasons:
        data[REASONS_KEY] = {"Type": "String", "Value": bounded(as_json(list(request.reasons)))}
    if request.snapshot:
        data[SNAPSHOT_KEY] = {"Type": "String", "Value": bounded(as_json(request.snapshot))}
    if request.error:
        data[ERROR_KEY] = {
            "Type": "String",
            "Value": request.error.summary(OPERATIONAL_DATA_VALUE_LIMIT // 2),
        }
    taken: set[str] = set()
    entries = _evidence_entries(request.evidence)
    for label, value in entries[:MAX_EVIDENCE_ENTRIES]:
        text = bounded(value if isinstance(value, str) else as_json(value))
        if text.strip():
            data[_evidence_key(label, taken)] = {"Type": "String", "Value": text}
    if len(entries) > MAX_EVIDENCE_ENTRIES:
        rest = [label for label, _ in entries[MAX_EVIDENCE_ENTRIES:]]
        note = {"note": f"{len(rest)} more evidence entries are in the execution history", "entries": rest}
        data[_evidence_key("more", taken)] = {"Type": "String", "Value": bounded(as_json(note))}
    return data


def ops_item_tags(cluster: str) -> list[TagTypeDef]:
    """The tags every OpsItem of ours carries: IAM lets this stack create OpsItems only with
    them and update only OpsItems that have them (see docs/security.md, IAM)."""
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
