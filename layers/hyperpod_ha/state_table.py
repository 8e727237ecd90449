"""The state table: every key format of its items and every conditional write on them.

One DynamoDB table (``STATE_TABLE``), one item per key ``pk``; items that must not outlive
their use carry ``expires_at`` (the table's TTL attribute). The keys:

- ``lease#<cluster>``: the cluster's verification lease, held by a run or a drill;
- ``notice#<cluster>#<event id>``: a notice to people was sent for that event;
- ``workers#<cluster>#<window start>``: the unhealthy workers counted in one window;
- ``watchdog#<cluster>``: the watchdog found the cluster not verified;
- ``status#<cluster>#<kind>``: the last verdict, snapshot, rotation, drill or restore
  (``hyperpod-ha status``);
- ``reminder#<cluster>#<OpsItem id>``: when the last "still open" reminder of that incident went out;
- ``redundancy#<cluster>``: since when the watchdog has seen no ready standby, and whether it
  opened the ``redundancy-lost`` incident.
- ``restore#<cluster>#<hour>``: the restore actions taken on the cluster in that hour (epoch hours).
- ``unreachable#<cluster>``: per instance id, since when SSM has not reached that Running controller.
- ``warning#<cluster>``: the watchdog's last sample of the active controller's counters, and
  since when each early warning holds and whether its incident is open.
- ``silence#<cluster>``: the operator's silence (``hyperpod-ha silence``): the last one started,
  whether ended early and by whom, and the ones before it (:mod:`hyperpod_ha.silences`).

Each function takes the DynamoDB client and the table's name; the lease goes in and out as
:class:`~hyperpod_ha.lease.Lease`, other values as plain Python values: DynamoDB's attribute-value
form stays in this module (and in the lease's own ``to_item``/``from_item``), written and read by
boto3's type (de)serializer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from hyperpod_ha.aws_errors import CONDITION_FAILED, error_code
from hyperpod_ha.lease import Lease, LeaseItemRejected

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

Item = Mapping[str, Any]
_SERIALIZER: Final = TypeSerializer()
_DESERIALIZER: Final = TypeDeserializer()


def lease_key(cluster: str) -> str:
    return f"lease#{cluster}"


def notice_key(cluster: str, event_id: str) -> str:
    return f"notice#{cluster}#{event_id}"


def workers_prefix(cluster: str) -> str:
    """What every window's key of the cluster starts with."""
    return f"workers#{cluster}#"


def workers_key(cluster: str, window_start: int) -> str:
    return f"{workers_prefix(cluster)}{window_start}"


def watchdog_key(cluster: str) -> str:
    return f"watchdog#{cluster}"


def status_key(cluster: str, kind: str) -> str:
    return f"status#{cluster}#{kind}"


def reminder_key(cluster: str, ops_item_id: str) -> str:
    return f"reminder#{cluster}#{ops_item_id}"


def redundancy_key(cluster: str) -> str:
    return f"redundancy#{cluster}"


def restore_key(cluster: str, hour: int) -> str:
    return f"restore#{cluster}#{hour}"


def unreachable_key(cluster: str) -> str:
    return f"unreachable#{cluster}"


def warning_key(cluster: str) -> str:
    return f"warning#{cluster}"


def silence_key(cluster: str) -> str:
    return f"silence#{cluster}"


def key(pk: str) -> dict[str, Any]:
    """The DynamoDB key of the item ``pk``."""
    return attribute_values({"pk": pk})


def attribute_values(plain: Mapping[str, object]) -> dict[str, Any]:
    """``plain`` (texts, whole numbers, sets of texts) in DynamoDB's attribute-value form."""
    return {name: _SERIALIZER.serialize(value) for name, value in plain.items()}


def plain_values(item: Item) -> dict[str, Any]:
    """An item (or expression result) as plain Python values; numbers are ``Decimal``."""
    return {name: _DESERIALIZER.deserialize(value) for name, value in item.items()}


# --- the lease (hyperpod_ha.lease) ---------------------------------------------------------


def read_lease(ddb: DynamoDBClient, table: str, cluster: str) -> Lease | None:
    """The cluster's lease as stored (it may have expired), or ``None``; :class:`LeaseItemRejected`
    for an item this code did not write."""
    item = ddb.get_item(TableName=table, Key=key(lease_key(cluster)), ConsistentRead=True).get("Item")
    return None if item is None else Lease.from_item(item)


def put_lease(
    ddb: DynamoDBClient,
    table: str,
    cluster: str,
    lease: Lease,
    retake: bool = False,
    handed_by: str | None = None,
) -> Lease | None:
    """Write ``lease`` as the cluster's if the lease is free: never taken, expired when ``lease``
    was taken, or (``retake``) already ``lease``'s own, or (``handed_by``, a run's lease id) held
    by the run ``lease.handed_from`` names with that id, which hands it over.

    ``None`` when written; otherwise the holder's lease. DynamoDB deletes expired items
    lazily, so an expired lease counts as free."""
    condition = "attribute_not_exists(pk) OR expires_at < :now"
    values: dict[str, object] = {":now": lease.taken_at}
    if retake:
        condition += " OR lease_id = :lease"
        values[":lease"] = lease.lease_id
    if handed_by and lease.handed_from:
        # Only a run's lease (a run's item has no kind), as its item names it now.
        condition += " OR (lease_id = :handed_by AND execution_name = :run AND attribute_not_exists(kind))"
        values.update({":handed_by": handed_by, ":run": lease.handed_from})
    holder = unless_condition_failed(
        ddb.put_item,
        TableName=table,
        Item={**key(lease_key(cluster)), **lease.to_item()},
        ConditionExpression=condition,
        ExpressionAttributeValues=attribute_values(values),
    )
    if holder is None:
        return None
    if not holder:  # the condition failed on an item, which DynamoDB returns
        raise LeaseItemRejected("the lease is held, but DynamoDB returned no holder")
    return Lease.from_item(holder)


JoinOutcome = Literal["joined", "already joined", "not held"]


def join_lease(
    ddb: DynamoDBClient, table: str, cluster: str, holder_lease: str, trigger_key: str
) -> JoinOutcome:
    """Count ``trigger_key`` as joining the run of ``holder_lease`` and keep its key: ``joined``;
    ``already joined`` when it had joined that run before; ``not held`` when ``holder_lease``
    holds the lease no more (released, or taken since)."""
    values: dict[str, object] = {
        ":one": 1,
        ":lease": holder_lease,
        ":trigger": trigger_key,
        ":key": {trigger_key},
    }
    found = unless_condition_failed(
        ddb.update_item,
        TableName=table,
        Key=key(lease_key(cluster)),
        UpdateExpression="ADD joined_count :one, joined :key",
        ConditionExpression="lease_id = :lease AND NOT contains(joined, :trigger)",
        ExpressionAttributeValues=attribute_values(values),
    )
    if found is None:
        return "joined"
    # The condition failed: on the trigger already joined, or on another lease (none when gone).
    return "already joined" if found and Lease.from_item(found).lease_id == holder_lease else "not held"


def unless_condition_failed(write: Callable[..., object], **request: Any) -> Item | None:
    """The conditional write ``write(**request)``: ``None`` when written, else the item its
    condition failed on (``{}`` when there was none)."""
    try:
        write(**request, ReturnValuesOnConditionCheckFailure="ALL_OLD")
    except ClientError as error:
        if error_code(error) != CONDITION_FAILED:
            raise
        found: Item = error.response.get("Item", {})  # type: ignore[assignment]
        return found
    return None


def release_lease(ddb: DynamoDBClient, table: str, cluster: str, lease_id: str) -> bool:
    """Delete the cluster's lease if ``lease_id`` still holds it; False when another does."""
    try:
        ddb.delete_item(
            TableName=table,
            Key=key(lease_key(cluster)),
            ConditionExpression="lease_id = :lease",
            ExpressionAttributeValues=attribute_values({":lease": lease_id}),
        )
    except ClientError as error:
        if error_code(error) == CONDITION_FAILED:
            return False
        raise
    return True


# --- notices sent once -----------------------------------------------------------------------


def mark_notice(ddb: DynamoDBClient, table: str, pk: str, expires_at: int) -> bool:
    """Write the marker ``pk`` unless it is there; False when it was (the notice went out)."""
    try:
        ddb.put_item(
            TableName=table,
            Item=attribute_values({"pk": pk, "expires_at": expires_at}),
            ConditionExpression="attribute_not_exists(pk)",
        )
    except ClientError as error:
        if error_code(error) == CONDITION_FAILED:
            return False
        raise
    return True


def forget_notice(ddb: DynamoDBClient, table: str, pk: str) -> None:
    ddb.delete_item(TableName=table, Key=key(pk))


# --- unhealthy workers per window ------------------------------------------------------------


def count_worker(
    ddb: DynamoDBClient, table: str, cluster: str, window_start: int, instance_id: str, expires_at: int
) -> int | None:
    """Add the instance to the window's set; the window's count, or ``None`` when it was there."""
    try:
        answer = ddb.update_item(
            TableName=table,
            Key=key(workers_key(cluster, window_start)),
            UpdateExpression="ADD instances :instance, unhealthy :one SET expires_at = :expires",
            ConditionExpression="attribute_not_exists(instances) OR NOT contains(instances, :id)",
            ExpressionAttributeValues=attribute_values(
                {":instance": {instance_id}, ":id": instance_id, ":one": 1, ":expires": expires_at}
            ),
            ReturnValues="UPDATED_NEW",
        )
    except ClientError as error:
        if error_code(error) != CONDITION_FAILED:
            raise
        return None
    return int(plain_values(answer["Attributes"])["unhealthy"])


def uncount_worker(
    ddb: DynamoDBClient, table: str, cluster: str, window_start: int, instance_id: str
) -> None:
    ddb.update_item(
        TableName=table,
        Key=key(workers_key(cluster, window_start)),
        UpdateExpression="DELETE instances :instance ADD unhealthy :minus",
        ExpressionAttributeValues=attribute_values({":instance": {instance_id}, ":minus": -1}),
    )


# --- reminders of open incidents -------------------------------------------------------------


def claim_reminder(ddb: DynamoDBClient, table: str, pk: str, now: int, cutoff: int, expires_at: int) -> bool:
    """Record a reminder sent at ``now`` unless one was sent after ``cutoff``; False when one
    was (of two runs at once, one claims it)."""
    try:
        ddb.update_item(
            TableName=table,
            Key=key(pk),
            UpdateExpression="SET sent_at = :now, expires_at = :expires",
            ConditionExpression="attribute_not_exists(pk) OR sent_at <= :cutoff",
            ExpressionAttributeValues={
                ":now": {"N": str(now)},
                ":cutoff": {"N": str(cutoff)},
                ":expires": {"N": str(expires_at)},
            },
        )
    except ClientError as error:
        if error_code(error) == CONDITION_FAILED:
            return False
        raise
    return True


def release_reminder(ddb: DynamoDBClient, table: str, pk: str, sent_at: int) -> None:
    """Undo the claim made at ``sent_at`` (the reminder was not sent), so a retry sends it."""
    try:
        ddb.delete_item(
            TableName=table,
            Key=key(pk),
            ConditionExpression="sent_at = :sent",
            ExpressionAttributeValues={":sent": {"N": str(sent_at)}},
        )
    except ClientError as error:
        if error_code(error) != CONDITION_FAILED:
            raise


# --- redundancy lost (the watchdog's) --------------------------------------------------------


def read_redundancy_loss(ddb: DynamoDBClient, table: str, cluster: str) -> dict[str, Any] | None:
    """``{"since": int, "opened": bool}`` while the cluster has no ready standby; else ``None``."""
    item = ddb.get_item(TableName=table, Key=key(redundancy_key(cluster)), ConsistentRead=True).get("Item")
    if item is None:
        return None
    values = plain_values(item)
    return {"since": int(values.get("since", 0)), "opened": bool(values.get("opened", False))}


def start_redundancy_loss(ddb: DynamoDBClient, table: str, cluster: str, since: int, expires_at: int) -> int:
    """Record the loss from ``since`` unless one is recorded; the recorded ``since`` (of two
    ticks at once, the first one's)."""
    found = unless_condition_failed(
        ddb.put_item,
        TableName=table,
        Item=attribute_values(
            {"pk": redundancy_key(cluster), "since": since, "opened": False, "expires_at": expires_at}
        ),
        ConditionExpression="attribute_not_exists(pk)",
    )
    return since if found is None else int(plain_values(found).get("since", since))


def mark_redundancy_incident(ddb: DynamoDBClient, table: str, cluster: str, since: int) -> None:
    """The incident of the loss from ``since`` is open (nothing when that loss has ended since)."""
    unless_condition_failed(
        ddb.update_item,
        TableName=table,
        Key=key(redundancy_key(cluster)),
        UpdateExpression="SET opened = :yes",
        ConditionExpression="since = :since",
        ExpressionAttributeValues=attribute_values({":yes": True, ":since": since}),
    )


def end_redundancy_loss(ddb: DynamoDBClient, table: str, cluster: str, since: int) -> None:
    """Forget the loss from ``since`` (a standby is ready again); a newer one is kept."""
    unless_condition_failed(
        ddb.delete_item,
        TableName=table,
        Key=key(redundancy_key(cluster)),
        ConditionExpression="since = :since",
        ExpressionAttributeValues=attribute_values({":since": since}),
    )


# --- restore actions per cluster and hour ----------------------------------------------------


def restore_actions(ddb: DynamoDBClient, table: str, cluster: str, hour: int) -> int:
    """How many restore actions were counted on the cluster in ``hour`` (epoch hours)."""
    item = ddb.get_item(TableName=table, Key=key(restore_key(cluster, hour)), ConsistentRead=True).get("Item")
    return 0 if item is None else int(plain_values(item).get("actions", 0))


def count_restore_action(
    ddb: DynamoDBClient, table: str, cluster: str, hour: int, at_most: int, expires_at: int
) -> int | None:
    """Count one restore action in ``hour`` unless ``at_most`` were counted: the new count, or
    ``None`` when the bound was reached (of two restores at once, only one gets the last one)."""
    try:
        answer = ddb.update_item(
            TableName=table,
            Key=key(restore_key(cluster, hour)),
            UpdateExpression="ADD actions :one SET expires_at = :expires",
            ConditionExpression="attribute_not_exists(actions) OR actions < :most",
            ExpressionAttributeValues=attribute_values({":one": 1, ":most": at_most, ":expires": expires_at}),
            ReturnValues="UPDATED_NEW",
        )
    except ClientError as error:
        if error_code(error) != CONDITION_FAILED:
            raise
        return None
    return int(plain_values(answer["Attributes"])["actions"])


# --- unreachable#<cluster> ------------------------------------------------------------------
# Since when each controller has been unreachable through SSM while its node is Running: the
# ``unreachable#<cluster>`` item, one attribute per instance id (epoch seconds). The watchdog's
# ticks set and clear it (:mod:`hyperpod_ha.watchdog.unreachable_nodes`); the restore reads it
# and, after a reboot, starts a node's wait again. Every tick that sees a node unreachable writes
# ``ticked_at``: a record no tick has written for ``STALE_SECONDS`` (the watchdog switched off or
# failing) is not believed, so a node that recovered meanwhile is never rebooted at once.

# Twice the slowest watchdog rate (WatchdogRateMinutes 60): a tick has been missed since then.
UNREACHABLE_STALE_SECONDS: Final = 2 * 3600
_NOT_UNREACHABLE_NODES: Final = frozenset({"pk", "expires_at", "ticked_at"})


def read_unreachable(ddb: DynamoDBClient, table: str, cluster: str) -> tuple[dict[str, int], int]:
    """Instance id -> since when it has been unreachable (epoch seconds), and the last tick that
    wrote the record (0: none)."""
    item = ddb.get_item(TableName=table, Key=key(unreachable_key(cluster)), ConsistentRead=True).get("Item")
    values = plain_values(item or {})
    nodes = {name: int(v) for name, v in values.items() if name not in _NOT_UNREACHABLE_NODES}
    return nodes, int(values.get("ticked_at", 0))


def unreachable_stale(ticked_at: int, now: float) -> bool:
    return now - ticked_at > UNREACHABLE_STALE_SECONDS


def unreachable_since(ddb: DynamoDBClient, table: str, cluster: str, now: float) -> dict[str, int]:
    """What the restore believes: the record, unless no tick wrote it in ``UNREACHABLE_STALE_SECONDS``."""
    nodes, ticked_at = read_unreachable(ddb, table, cluster)
    return {} if unreachable_stale(ticked_at, now) else nodes


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


# --- early warnings (the watchdog's) ---------------------------------------------------------


def read_warnings(ddb: DynamoDBClient, table: str, cluster: str) -> dict[str, Any] | None:
    """``{"sample": str, "kinds": str}`` (each JSON as written) or ``None``."""
    item = ddb.get_item(TableName=table, Key=key(warning_key(cluster)), ConsistentRead=True).get("Item")
    if item is None:
        return None
    values = plain_values(item)
    return {name: values[name] for name in ("sample", "kinds") if isinstance(values.get(name), str)}


def write_warnings(
    ddb: DynamoDBClient, table: str, cluster: str, sample: str, kinds: str, expires_at: int
) -> None:
    """The tick's sample and windows, replacing the last (one tick at a time: the schedule's)."""
    ddb.put_item(
        TableName=table,
        Item=attribute_values(
            {"pk": warning_key(cluster), "sample": sample, "kinds": kinds, "expires_at": expires_at}
        ),
    )


# --- silence#<cluster> (the operator's silences, hyperpod_ha.silences) ----------------------


def read_silence(ddb: DynamoDBClient, table: str, cluster: str) -> dict[str, Any] | None:
    """The cluster's silence item as plain values (numbers ``Decimal``), or ``None``."""
    item = ddb.get_item(TableName=table, Key=key(silence_key(cluster)), ConsistentRead=True).get("Item")
    return None if item is None else plain_values(item)


def put_silence(
    ddb: DynamoDBClient,
    table: str,
    cluster: str,
    values: Mapping[str, object],
    previous: str | None,
    now: int,
) -> dict[str, Any] | None:
    """Write the silence ``values`` as the cluster's unless one is in force: ``previous`` (the
    silence id read before, ``None``: there was none) is still the item's and it has ended
    (early, or its ``until`` is past at ``now``). ``None`` when written; else the item found
    (of two starts at once, one wins; ``{}`` when there was none)."""
    if previous is None:
        condition = "attribute_not_exists(pk)"
        given: dict[str, object] = {}
    else:
        condition = "silence_id = :previous AND (attribute_exists(ended_at) OR #until <= :now)"
        given = {":previous": previous, ":now": now}
    request: dict[str, Any] = {
        "TableName": table,
        "Item": attribute_values({**values, "pk": silence_key(cluster)}),
        "ConditionExpression": condition,
    }
    if given:
        request["ExpressionAttributeValues"] = attribute_values(given)
        request["ExpressionAttributeNames"] = {"#until": "until"}  # UNTIL is a reserved word
    found = unless_condition_failed(ddb.put_item, **request)
    return None if found is None else plain_values(found)


def end_silence(
    ddb: DynamoDBClient, table: str, cluster: str, silence_id: str, now: int, ended_by: str
) -> dict[str, Any] | None:
    """End the silence ``silence_id`` at ``now`` while it is in force: ``None`` when ended; else
    the item found (ended already, expired, or another silence; ``{}`` when there was none)."""
    found = unless_condition_failed(
        ddb.update_item,
        TableName=table,
        Key=key(silence_key(cluster)),
        UpdateExpression="SET ended_at = :now, ended_by = :by",
        ConditionExpression="silence_id = :id AND attribute_not_exists(ended_at) AND #until > :now",
        ExpressionAttributeNames={"#until": "until"},
        ExpressionAttributeValues=attribute_values({":now": now, ":by": ended_by, ":id": silence_id}),
    )
    return None if found is None else plain_values(found)
