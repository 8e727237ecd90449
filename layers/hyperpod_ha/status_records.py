"""The last of each kind of event per cluster, kept in the state table for ``hyperpod-ha status``.

One item per cluster and kind (``status#<cluster>#<kind>``): the last verdict (with its
controllers, :func:`controllers_record`), snapshot, rotation roll-out, drill, restore of
redundancy and the watchdog's last early warnings and figures. Each is overwritten by the next;
none expires. Writing one is best effort: the record serves people looking, it must never fail
the step that writes it.
"""

from __future__ import annotations

import json
import math
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

Kind = Literal["verdict", "snapshot", "rotation", "drill", "restore", "warnings"]
KINDS: Final[tuple[Kind, ...]] = ("verdict", "snapshot", "rotation", "drill", "restore", "warnings")
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

    def read_one(self, cluster: str, kind: Kind) -> dict[str, Any] | None:
        """One kind's record (``GetItem`` only: the watchdog reads the last restore's)."""
        item = self._ddb.get_item(
            TableName=self._table, Key=key(record_key(cluster, kind)), ConsistentRead=True
        ).get("Item")
        if item is None:
            return None
        record = plain_values(item)
        return {"recorded_at": int(record["recorded_at"]), **json.loads(record["data"])}

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


# Each controller of the last verdict, as `hyperpod-ha status` shows it in its table: what the
# verdict's evidence says, a few fields each (the rest stays in the execution's history).
MAX_CONTROLLERS: Final = 8
_CONTROLLER_TEXT: Final = {
    "instance_id": 32,
    "address": 64,
    "status": 32,
    "slurmctld": 32,
    "slurm_version": 32,
}
_CONTROLLER_FLAGS: Final = ("active", "answers_ping", "writes_heartbeat", "slurmdbd_reachable")


def controllers_record(evidence: object) -> list[dict[str, Any]] | None:
    """The verdict's ``evidence`` (``{name: entry}``, :func:`hyperpod_ha.verdict.evidence.evidence`)
    as the rows of the status table: name, position in SlurmctldHost, instance, address, the
    report's status, slurmctld, active, ping, heartbeat age and writer, slurmdbd. Known keys only,
    each text bounded; what a row does not say is ``None``."""
    if not isinstance(evidence, Mapping) or not evidence:
        return None
    rows = []
    for name, entry in list(evidence.items())[:MAX_CONTROLLERS]:
        if not isinstance(entry, Mapping):
            continue
        row: dict[str, Any] = {"name": str(name)[:64]}
        for field, limit in _CONTROLLER_TEXT.items():
            text = entry.get(field)
            row[field] = text[:limit] if isinstance(text, str) else None
        for field in _CONTROLLER_FLAGS:
            flag = entry.get(field)
            row[field] = flag if isinstance(flag, bool) else None
        row["position"] = _whole(entry.get("position"))
        row["heartbeat_age_seconds"] = _whole(entry.get("heartbeat_age_seconds"))
        row["readyz"] = _whole(entry.get("readyz"))  # Slurm's own answer (25.11+), or None
        rows.append(row)
    return rows or None


def _whole(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return int(value)


_REDUNDANCY_LEVELS: Final = frozenset({"full", "reduced", "none", "unknown"})
_MAX_CONTROLLERS: Final = 32  # as many as the verdict weighs (hyperpod_ha.verdict.MAX_REPORTS)
_NAME_LIMIT, _WHY_LIMIT = 255, 512


def redundancy_record(event: Mapping[str, Any]) -> dict[str, Any] | None:
    """The verdict's redundancy as the run passed it on (``redundancy``, ``standbys``,
    ``not_ready``), kept small: a known level only, at most 32 names, each text bounded."""
    level = event.get("redundancy")
    if level not in _REDUNDANCY_LEVELS:
        return None
    standbys = event.get("standbys")
    not_ready = event.get("not_ready")
    return {
        "redundancy": level,
        "standbys": [s[:_NAME_LIMIT] for s in standbys[:_MAX_CONTROLLERS] if isinstance(s, str)]
        if isinstance(standbys, list)
        else [],
        "not_ready": {
            str(name)[:_NAME_LIMIT]: why[:_WHY_LIMIT]
            for name, why in list(not_ready.items())[:_MAX_CONTROLLERS]
            if isinstance(why, str)
        }
        if isinstance(not_ready, Mapping)
        else {},
    }


_MAX_ADVISORIES: Final = 16
_ADVISORY_TEXT: Final = {"advisory": 64, "what": 512}


def advisories_record(event: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The verdict's ``advisories`` (known-bad releases the controllers run) as the run passed
    them on, kept small: known keys only, each text and list bounded."""
    given = event.get("advisories")
    rows: list[dict[str, Any]] = []
    for entry in given[:_MAX_ADVISORIES] if isinstance(given, list) else []:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("advisory"), str):
            continue
        row: dict[str, Any] = {
            name: entry[name][:limit]
            for name, limit in _ADVISORY_TEXT.items()
            if isinstance(entry.get(name), str)
        }
        for name in ("releases", "controllers", "fixed_in", "sources"):
            values = entry.get(name)
            row[name] = (
                [v[:_NAME_LIMIT] for v in values[:_MAX_CONTROLLERS] if isinstance(v, str)]
                if isinstance(values, list)
                else []
            )
        rows.append(row)
    return rows


# The verdicts' names (hyperpod_ha.verdict.VerdictName, a test keeps them equal), named here: the
# verdict's function imports early_warning, which keeps its status here, so this module imports
# no feature.
VERDICT_NAMES: Final = frozenset({"HEALTHY", "FAILED_OVER", "DEGRADED", "SPLIT_BRAIN", "DOWN", "UNKNOWN"})


def verdict_metric(verdict: str) -> str | None:
    """``VerdictFailedOver`` for FAILED_OVER; ``None`` for a name that is not a verdict."""
    if verdict not in VERDICT_NAMES:
        return None
    return "Verdict" + "".join(part.capitalize() for part in verdict.split("_"))
