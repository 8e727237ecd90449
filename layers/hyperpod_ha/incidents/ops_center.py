"""OpsCenter for incidents: create (deduplicated), read, update and find this project's OpsItems.
Every refusal is an :class:`IncidentFailed` naming the call and AWS's error code."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from botocore.exceptions import ClientError

from hyperpod_ha.aws_errors import error_code
from hyperpod_ha.incidents.errors import IncidentFailed
from hyperpod_ha.incidents.keys import CLUSTER_KEY, KIND_KEY, SOURCE
from hyperpod_ha.incidents.ops_item import as_json
from hyperpod_ha.redaction import scrub_text

if TYPE_CHECKING:
    from mypy_boto3_ssm import SSMClient
    from mypy_boto3_ssm.type_defs import (
        CreateOpsItemRequestTypeDef,
        OpsItemDataValueTypeDef,
        OpsItemFilterTypeDef,
    )

OPEN = ("Open", "InProgress")


def data_value(data: Mapping[str, Any] | None, key: str) -> str | None:
    """The value of one operational-data key, ``None`` when absent or empty."""
    entry = (data or {}).get(key)
    if isinstance(entry, Mapping):
        value = entry.get("Value")
        return value if isinstance(value, str) and value else None
    return None


def _scrubbed_data(data: Mapping[str, OpsItemDataValueTypeDef]) -> dict[str, OpsItemDataValueTypeDef]:
    """Operational data as it may leave: every value through the one redaction path."""
    return {
        key: cast("OpsItemDataValueTypeDef", {**entry, "Value": scrub_text(entry.get("Value", ""))})
        for key, entry in data.items()
    }


_Request = TypeVar("_Request", bound=Mapping[str, Any])


def _scrubbed(request: _Request) -> _Request:
    """A create or update request with its texts (title, description, data) scrubbed: already
    redacted evidence stays as it is, anything else written into it does not leak."""
    scrubbed: dict[str, Any] = dict(request)
    for name in ("Title", "Description"):
        if isinstance(scrubbed.get(name), str):
            scrubbed[name] = scrub_text(scrubbed[name])
    if isinstance(scrubbed.get("OperationalData"), Mapping):
        scrubbed["OperationalData"] = _scrubbed_data(scrubbed["OperationalData"])
    return cast("_Request", scrubbed)


class OpsCenter:
    def __init__(self, ssm: SSMClient) -> None:
        self.ssm = ssm

    def create(self, create: CreateOpsItemRequestTypeDef, cluster: str, kind: str) -> str:
        """The id of the new OpsItem, or of the open one with the same dedup string."""
        try:
            return self.ssm.create_ops_item(**_scrubbed(create))["OpsItemId"]
        except ClientError as error:
            if error_code(error) != "OpsItemAlreadyExistsException":
                raise IncidentFailed(f"CreateOpsItem failed: {error_code(error)}") from error
            existing = error.response.get("OpsItemId")
            if isinstance(existing, str) and existing:
                return existing
            # The dedup hit did not name the OpsItem: find the open one for this cluster and kind.
            found = [
                s for s in self.find(cluster, OPEN) if data_value(s.get("OperationalData"), KIND_KEY) == kind
            ]
            if not found:
                raise IncidentFailed(
                    "CreateOpsItem reported a duplicate but no open OpsItem was found"
                ) from error
            return str(found[0]["OpsItemId"])

    def get(self, ops_item_id: str) -> Mapping[str, Any]:
        try:
            return self.ssm.get_ops_item(OpsItemId=ops_item_id)["OpsItem"]
        except ClientError as error:
            raise IncidentFailed(f"GetOpsItem {ops_item_id} failed: {error_code(error)}") from error

    def update(self, ops_item_id: str, data: Mapping[str, OpsItemDataValueTypeDef], **fields: Any) -> None:
        try:
            self.ssm.update_ops_item(
                OpsItemId=ops_item_id, OperationalData=_scrubbed_data(data), **_scrubbed(fields)
            )
        except ClientError as error:
            raise IncidentFailed(f"UpdateOpsItem {ops_item_id} failed: {error_code(error)}") from error

    def find(self, cluster: str, statuses: Sequence[str], **markers: str) -> list[Mapping[str, Any]]:
        """This project's OpsItems for ``cluster`` in ``statuses``, optionally with marker values."""
        wanted = {CLUSTER_KEY: cluster, **markers}
        filters: list[OpsItemFilterTypeDef] = [
            {"Key": "Source", "Values": [SOURCE], "Operator": "Equal"},
            {"Key": "Status", "Values": list(statuses), "Operator": "Equal"},
        ]
        filters += [
            {"Key": "OperationalData", "Values": [as_json({"key": key, "value": value})], "Operator": "Equal"}
            for key, value in wanted.items()
        ]
        found: list[Mapping[str, Any]] = []
        try:
            for page in self.ssm.get_paginator("describe_ops_items").paginate(OpsItemFilters=filters):
                found += page.get("OpsItemSummaries", [])
        except ClientError as error:
            raise IncidentFailed(f"DescribeOpsItems failed: {error_code(error)}") from error
        # Never touch an OpsItem that is not ours, whatever the filters matched.
        return [
            summary
            for summary in found
            if summary.get("Source") == SOURCE
            and summary.get("Status") in statuses
            and all(data_value(summary.get("OperationalData"), key) == value for key, value in wanted.items())
        ]
