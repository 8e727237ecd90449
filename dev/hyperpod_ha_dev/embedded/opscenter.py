"""OpsCenter for the embedded stack: moto has no OpsItems, so this small, explicit double
answers CreateOpsItem, GetOpsItem, UpdateOpsItem and DescribeOpsItems inside moto's SSM.

Only what this project relies on: the ``/aws/dedup`` rule (a second open item with the same
dedup string is refused with ``OpsItemAlreadyExistsException`` naming the existing item;
the other way AWS may answer, quietly, is covered by the unit tests with Stubber), status
changes, and the Source, Status and OperationalData filters with ``Equal``.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from moto.core.exceptions import JsonRESTError

from hyperpod_ha_dev.embedded.patching import Patch

OPEN_STATUSES = frozenset({"Open", "InProgress"})


class OpsItemAlreadyExists(JsonRESTError):
    def __init__(self, ops_item_id: str) -> None:
        super().__init__("OpsItemAlreadyExistsException", f"The OpsItem already exists: {ops_item_id}")
        self.description = json.dumps(
            {"__type": "OpsItemAlreadyExistsException", "message": self.message, "OpsItemId": ops_item_id}
        )


class OpsItemNotFound(JsonRESTError):
    def __init__(self, ops_item_id: str) -> None:
        super().__init__("OpsItemNotFoundException", f"OpsItem {ops_item_id} does not exist")


def ops_items(backend: Any) -> dict[str, dict[str, Any]]:
    """The OpsItems of one moto SSM backend (reset with it)."""
    store: dict[str, dict[str, Any]] | None = getattr(backend, "_hyperpod_ha_ops_items", None)
    if store is None:
        store = {}
        backend._hyperpod_ha_ops_items = store
    return store


def _dedup(item: dict[str, Any]) -> str | None:
    raw = item.get("OperationalData", {}).get("/aws/dedup", {}).get("Value")
    return json.loads(raw).get("dedupString") if raw else None


def _matches(item: dict[str, Any], filters: list[dict[str, Any]]) -> bool:
    for rule in filters:
        key, values = rule["Key"], rule.get("Values", [])
        if key in ("Source", "Status", "Title", "OpsItemId", "Severity", "Category"):
            if item.get(key) not in values:
                return False
        elif key == "OperationalData":
            for value in values:
                wanted = json.loads(value)
                if item.get("OperationalData", {}).get(wanted["key"], {}).get("Value") != wanted["value"]:
                    return False
        else:
            raise JsonRESTError("ValidationException", f"the OpsCenter double does not filter on {key}")
    return True


def patches() -> list[Patch]:
    """moto's SSM responses with OpsItems (applied by ``delivery.patched``)."""
    from moto.ssm.responses import SimpleSystemManagerResponse

    def create_ops_item(self: Any) -> str:
        store = ops_items(self.ssm_backend)
        request = json.loads(self.body)
        dedup = _dedup(request)
        for existing in store.values():
            if dedup and existing["Status"] in OPEN_STATUSES and _dedup(existing) == dedup:
                raise OpsItemAlreadyExists(existing["OpsItemId"])
        ops_item_id = f"oi-{len(store) + 1:012x}"
        now = dt.datetime.now(dt.UTC).timestamp()
        store[ops_item_id] = {
            **request,
            "OpsItemId": ops_item_id,
            "Status": "Open",
            "CreatedTime": now,
            "LastModifiedTime": now,
            "Version": "1",
        }
        return json.dumps(
            {
                "OpsItemId": ops_item_id,
                "OpsItemArn": f"arn:aws:ssm:us-east-1:123456789012:opsitem/{ops_item_id}",
            }
        )

    def get_ops_item(self: Any) -> str:
        ops_item_id = json.loads(self.body)["OpsItemId"]
        item = ops_items(self.ssm_backend).get(ops_item_id)
        if item is None:
            raise OpsItemNotFound(ops_item_id)
        return json.dumps({"OpsItem": item})

    def update_ops_item(self: Any) -> str:
        request = json.loads(self.body)
        item = ops_items(self.ssm_backend).get(request["OpsItemId"])
        if item is None:
            raise OpsItemNotFound(request["OpsItemId"])
        data = {**item.get("OperationalData", {}), **request.pop("OperationalData", {})}
        item.update(
            {**request, "OperationalData": data, "LastModifiedTime": dt.datetime.now(dt.UTC).timestamp()}
        )
        return "{}"

    def describe_ops_items(self: Any) -> str:
        filters = json.loads(self.body).get("OpsItemFilters", [])
        found = [item for item in ops_items(self.ssm_backend).values() if _matches(item, filters)]
        keys = (
            "OpsItemId",
            "Title",
            "Source",
            "Status",
            "Severity",
            "Category",
            "OperationalData",
            "CreatedTime",
        )
        return json.dumps(
            {"OpsItemSummaries": [{key: item[key] for key in keys if key in item} for item in found]}
        )

    return [
        (SimpleSystemManagerResponse, "create_ops_item", create_ops_item),
        (SimpleSystemManagerResponse, "get_ops_item", get_ops_item),
        (SimpleSystemManagerResponse, "update_ops_item", update_ops_item),
        (SimpleSystemManagerResponse, "describe_ops_items", describe_ops_items),
    ]
