"""Since when each controller has been unreachable through SSM while its node is Running: the
``unreachable#<cluster>`` item, one attribute per instance id (epoch seconds). The watchdog's
ticks set and clear it (:mod:`hyperpod_ha.watchdog.unreachable_nodes`); the restore reads it
and, after a reboot, starts a node's wait again. Every tick that sees a node unreachable writes
``ticked_at``: a record no tick has written for ``STALE_SECONDS`` (the watchdog switched off or
failing) is not believed, so a node that recovered meanwhile is never rebooted at once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from hyperpod_ha.state_table import (
    attribute_values,
    key,
    plain_values,
    unless_condition_failed,
    unreachable_key,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# Twice the slowest watchdog rate (WatchdogRateMinutes 60): a tick has been missed since then.
STALE_SECONDS: Final = 2 * 3600
_NOT_NODES: Final = frozenset({"pk", "expires_at", "ticked_at"})


def read_unreachable(ddb: DynamoDBClient, table: str, cluster: str) -> tuple[dict[str, int], int]:
    """Instance id -> since when it has been unreachable (epoch seconds), and the last tick that
    wrote the record (0: none)."""
    item = ddb.get_item(TableName=table, Key=key(unreachable_key(cluster)), ConsistentRead=True).get("Item")
    values = plain_values(item or {})
    nodes = {name: int(v) for name, v in values.items() if name not in _NOT_NODES}
    return nodes, int(values.get("ticked_at", 0))


def stale(ticked_at: int, now: float) -> bool:
    return now - ticked_at > STALE_SECONDS


def unreachable_since(ddb: DynamoDBClient, table: str, cluster: str, now: float) -> dict[str, int]:
    """What the restore believes: the record, unless no tick wrote it in ``STALE_SECONDS``."""
    nodes, ticked_at = read_unreachable(ddb, table, cluster)
    return {} if stale(ticked_at, now) else nodes


def mark_unreachable(ddb: DynamoDBClient, table: str, cluster: str, node: str, now: int, expires: int) -> int:
    """Since when the instance ``node`` is unreachable: ``now`` unless one is kept (the first holds)."""
    answer = ddb.update_item(
        TableName=table,
        Key=key(unreachable_key(cluster)),
        UpdateExpression="SET #node = if_not_exists(#node, :now), expires_at = :expires, ticked_at = :now",
        ExpressionAttributeNames={"#node": node},
        ExpressionAttributeValues=attribute_values({":now": now, ":expires": expires}),
        ReturnValues="ALL_NEW",
    )
    return int(plain_values(answer["Attributes"])[node])


def restart_unreachable(ddb: DynamoDBClient, table: str, cluster: str, instance_id: str, now: int) -> None:
    """``instance_id`` was rebooted at ``now``: its wait starts again (only while it is recorded)."""
    unless_condition_failed(
        ddb.update_item,
        TableName=table,
        Key=key(unreachable_key(cluster)),
        UpdateExpression="SET #node = :now",
        ConditionExpression="attribute_exists(#node)",
        ExpressionAttributeNames={"#node": instance_id},
        ExpressionAttributeValues=attribute_values({":now": now}),
    )


def forget_unreachable(ddb: DynamoDBClient, table: str, cluster: str, instance_id: str, since: int) -> None:
    """``instance_id`` was reached again: forget the time ``since`` (a newer one is kept)."""
    unless_condition_failed(
        ddb.update_item,
        TableName=table,
        Key=key(unreachable_key(cluster)),
        UpdateExpression="REMOVE #node",
        ConditionExpression="#node = :since",
        ExpressionAttributeNames={"#node": instance_id},
        ExpressionAttributeValues=attribute_values({":since": since}),
    )
