"""The last of each kind of event per cluster, kept in the state table for ``hyperpod-ha status``.

One item per cluster and kind (``status#<cluster>#<kind>``): the last verdict, snapshot,
rotation roll-out, drill and restore of redundancy. Each is overwritten by the next; none
expires. Writing one is best effort: the record serves people looking, it must never fail the
step that writes it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

from botocore.exceptions import BotoCoreError, ClientError

from hyperpod_ha.observability import logger
from hyperpod_ha.redaction import redact
from hyperpod_ha.state_table import attribute_values, key, plain_values
from hyperpod_ha.state_table import status_key as record_key

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

Kind = Literal["verdict", "snapshot", "rotation", "drill", "restore"]
KINDS: Final[tuple[Kind, ...]] = ("verdict", "snapshot", "rotation", "drill", "restore")
MAX_RECORD_BYTES: Final = 32 * 1024


class StatusRecords:
    def __init__(self, dynamodb: DynamoDBClient, table: str, clock: Callable[[], float] = time.time) -> None:
        self._ddb = dynamodb
        self._table = table
        self._clock = clock

    def put(self, cluster: str, kind: Kind, data: Mapping[str, Any]) -> bool:
        # `hyperpod-ha status` prints it: reasons and excerpts through the one redaction path.
        body = json.dumps(redact(data), sort_keys=True, default=str)
        if len(body) > MAX_RECORD_BYTES:
            body = json.dumps({"truncated": True, "keys": sorted(data)})
        try:
            self._ddb.put_item(
                TableName=self._table,
                Item=attribute_values(
                    {
                        "pk": record_key(cluster, kind),
                        "kind": kind,
                        "cluster": cluster,
                        "recorded_at": int(self._clock()),
                        "data": body,
                    }
                ),
            )
        except (ClientError, BotoCoreError) as error:
            logger.warning("status record not written", extra={"kind": kind, "reason": str(error)[:300]})
            return False
        return True

    def read(self, cluster: str) -> dict[str, dict[str, Any]]:
        """Every kind recorded for the cluster: ``{kind: {"recorded_at": epoch, **data}}``."""
        found = self._ddb.batch_get_item(
            RequestItems={
                self._table: {
                    "Keys": [key(record_key(cluster, kind)) for kind in KINDS],
                    "ConsistentRead": True,
                }
            }
        )
        records: dict[str, dict[str, Any]] = {}
        for item in found.get("Responses", {}).get(self._table, []):
            record = plain_values(item)
            records[record["kind"]] = {
                "recorded_at": int(record["recorded_at"]),
                **json.loads(record["data"]),
            }
        return records


_ACCOUNTING_FIELDS: Final = {"mode": 16, "config_strategy": 32}
_DATABASE_FIELDS: Final = {"endpoint": 255, "name": 64, "secret_arn": 2048}


def accounting_record(value: object) -> dict[str, Any] | None:
    """The run's accounting mode as discovery passed it on (``ClusterControllers.accounting``),
    kept small for ``hyperpod-ha status``: known keys only, each text bounded."""
    if not isinstance(value, Mapping):
        return None
    kept: dict[str, Any] = {
        name: value[name][:limit]
        for name, limit in _ACCOUNTING_FIELDS.items()
        if isinstance(value.get(name), str)
    }
    database = value.get("database")
    if isinstance(database, Mapping):
        kept["database"] = {
            name: database[name][:limit]
            for name, limit in _DATABASE_FIELDS.items()
            if isinstance(database.get(name), str)
        }
        port = database.get("port")
        if isinstance(port, int) and not isinstance(port, bool):
            kept["database"]["port"] = port
    return kept or None


def verdict_metric(verdict: str) -> str | None:
    """``VerdictFailedOver`` for FAILED_OVER; ``None`` for a name that is not a verdict."""
    from hyperpod_ha.verdict import VerdictName

    if verdict not in VerdictName.__members__:
        return None
    return "Verdict" + "".join(part.capitalize() for part in verdict.split("_"))
