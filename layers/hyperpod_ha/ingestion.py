"""Turning triggers (SNS controller notifications, HyperPod EventBridge events) into runs.

Every trigger ends in exactly one outcome; bad input is kept (dead-letter queue) with its
reason and never starts a run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from hyperpod_ha.convergence import trigger_time
from hyperpod_ha.hyperpod_events import (
    KNOWN_HEALTH_STATUSES,
    KNOWN_REPAIR_ACTIONS,
    ClusterEvent,
    ClusterStateChange,
    EventRejected,
    HyperPodEvent,
    NodeHealthEvent,
    parse_hyperpod_event,
)
from hyperpod_ha.notices import Notification, publish, subject_line
from hyperpod_ha.notifications import ControllerNotification
from hyperpod_ha.observability import logger
from hyperpod_ha.verification_runs import Trigger, VerificationRuns
from hyperpod_ha.worker_failures import WorkerFailures

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_sns import SNSClient
    from mypy_boto3_sqs import SQSClient

# SQS message bodies are at most 256 KiB (UTF-8 bytes); keep the rejected input well under that.
SQS_MAX_BODY_BYTES = 256 * 1024
MAX_KEPT_BYTES = 200_000
# The id and reason come from the input too (an SNS MessageId, an event id): bounded as well.
_MAX_ID_CHARS = 256
_MAX_REASON_CHARS = 1024
# How much of a rejected input is kept: whole when it is small (every real event is), else
# its start. The walk stops at these bounds, so a 1 MiB input costs no more than a small one.
_EXCERPT_CHARS = MAX_KEPT_BYTES - 8 * 1024
_EXCERPT_NODES = 5_000
_EXCERPT_DEPTH = 32


def rejected_body(source: str, input_id: str, reason: str, raw: Any) -> str:
    """The dead-letter message for one rejected input: at most :data:`MAX_KEPT_BYTES` UTF-8 bytes,
    ASCII JSON (every character SQS accepts). Never raises: the reject path must not fail."""
    head = {"source": source[:64], "id": input_id[:_MAX_ID_CHARS], "reason": reason[:_MAX_REASON_CHARS]}
    try:
        excerpt = _Excerpt()
        kept = excerpt.of(raw, 0)
        body = json.dumps({**head, "input": kept, "input_truncated": excerpt.truncated})
    except Exception:  # whatever the input holds, the message goes out
        body = ""
    if not body or len(body) > MAX_KEPT_BYTES:
        # Not writable as JSON at all, or an id and reason so full of escapes that no room is left.
        body = json.dumps({**head, "input_dropped": True})
    return body


class _Excerpt:
    """A copy of a JSON value cut to a budget of encoded characters, nodes and depth."""

    def __init__(self) -> None:
        self.chars = _EXCERPT_CHARS
        self.nodes = _EXCERPT_NODES
        self.truncated = False

    def _spend(self, chars: int) -> bool:
        self.nodes -= 1
        self.chars -= chars
        if self.chars < 0 or self.nodes < 0:
            self.truncated = True
            return False
        return True

    def _text(self, value: str) -> str | None:
        if len(value) <= 64 and value.isascii():
            cost = 6 * len(value) + 2  # an upper bound: each escape is at most 6 characters
        else:
            room = max(self.chars - 2, 0)  # what is left once the separator is paid for
            value = value[:room]
            cost = len(json.dumps(value))
            while cost > room and value:
                value = value[: len(value) * room // cost]
                cost = len(json.dumps(value))
                self.truncated = True
        return value if self._spend(cost + 2) else None

    def of(self, value: Any, depth: int) -> Any:
        if isinstance(value, dict | list | tuple):
            return self._container(value, depth)
        if isinstance(value, str):
            return self._text(value)
        if value is None or isinstance(value, bool | int | float):
            # str(): json writes numbers the same way (a float's "Infinity" is 8 characters).
            cost = 7 if value is None or isinstance(value, bool) else max(len(str(value)), 8) + 2
            return value if self._spend(cost) else None
        return self._text(str(value)[:_MAX_ID_CHARS])

    def _container(self, value: dict[Any, Any] | list[Any] | tuple[Any, ...], depth: int) -> Any:
        if depth >= _EXCERPT_DEPTH or not self._spend(4):
            self.truncated = True
            return None
        if isinstance(value, dict):
            kept: dict[str, Any] = {}
            for key, item in value.items():
                name = self._text(str(key)[:_MAX_ID_CHARS])
                if name is None:
                    break
                kept[name] = self.of(item, depth + 1)
                if self.truncated:
                    break
            return kept
        items: list[Any] = []
        for item in value:
            items.append(self.of(item, depth + 1))
            if self.truncated:
                break
        return items


class RejectedInputs:
    """The dead-letter queue for input this project will never understand."""

    def __init__(self, sqs: SQSClient, queue_url: str) -> None:
        self._sqs = sqs
        self._queue_url = queue_url

    def keep(self, source: str, input_id: str, reason: str, raw: Any) -> None:
        input_id = str(input_id)[:_MAX_ID_CHARS]
        self._sqs.send_message(
            QueueUrl=self._queue_url,
            MessageBody=rejected_body(source, input_id, reason, raw),
            MessageAttributes={
                "reason": {"DataType": "String", "StringValue": _attribute(reason)},
                "source": {"DataType": "String", "StringValue": _attribute(source)},
            },
        )
        logger.warning("input rejected", extra={"source": source, "input_id": input_id, "reason": reason})


def _attribute(text: str) -> str:
    # An attribute value must be non-empty and hold only characters SQS allows: ASCII escapes.
    return json.dumps(text[:256])[1:-1][:256] or "-"


def controller_notification_record(
    runs: VerificationRuns,
    cluster: str,
    message_id: str,
    notification: ControllerNotification,
    timestamp: str,
) -> dict[str, Any]:
    trigger = Trigger(
        source="sns",
        id=message_id,
        summary={
            "status": notification.status,
            "address": notification.address,
            "role": notification.role,
            "timestamp": timestamp,
        },
        time=trigger_time(timestamp),
    )
    reason = f"slurmctld {notification.status} on {notification.address} ({notification.role} script)"
    decision = runs.start_or_join(cluster, trigger, reason)
    logger.info(
        "controller notification handled",
        extra={
            "message_id": message_id,
            "outcome": decision.outcome,
            "execution_arn": decision.execution_arn,
        },
    )
    return {
        "message_id": message_id,
        "outcome": decision.outcome,
        "status": notification.status,
        "address": notification.address,
        "role": notification.role,
        "execution_arn": decision.execution_arn,
    }


class Notices:
    """Notices to people on the notification topic; ``send_once`` at most once per key."""

    def __init__(
        self, sns: SNSClient, topic_arn: str, dynamodb: DynamoDBClient, table: str, ttl_seconds: int
    ) -> None:
        self._sns = sns
        self._topic_arn = topic_arn
        self._ddb = dynamodb
        self._table = table
        self._ttl_seconds = ttl_seconds

    def send_once(self, key: str, notice: Notification, now: int) -> bool:
        try:
            self._ddb.put_item(
                TableName=self._table,
                Item={"pk": {"S": f"notice#{key}"}, "expires_at": {"N": str(now + self._ttl_seconds)}},
                ConditionExpression="attribute_not_exists(pk)",
            )
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        try:
            self.send(notice)
        except Exception:
            # Forget the marker so the retried delivery sends the notice.
            self._ddb.delete_item(TableName=self._table, Key={"pk": {"S": f"notice#{key}"}})
            raise
        return True

    def send(self, notice: Notification) -> None:
        publish(self._sns, self._topic_arn, notice)


class NodeEventTriage:
    """Decides what one HyperPod EventBridge event means for this cluster."""

    def __init__(
        self,
        cluster: str,
        controller_group: str,
        runs: VerificationRuns,
        workers: WorkerFailures,
        notices: Notices,
        group_of_instance: Callable[[str, str], str | None],
        clock: Callable[[], float],
    ) -> None:
        self._cluster = cluster
        self._controller_group = controller_group
        self._runs = runs
        self._workers = workers
        self._notices = notices
        self._group_of_instance = group_of_instance
        self._clock = clock

    def handle(self, event: Mapping[str, Any], rejected: RejectedInputs) -> dict[str, Any]:
        raw_id = event.get("id") if isinstance(event, Mapping) else None
        event_id = raw_id[:256] if isinstance(raw_id, str) else ""
        try:
            parsed = parse_hyperpod_event(event)
        except EventRejected as error:
            rejected.keep("eventbridge", event_id, str(error), event)
            return {"event_id": event_id, "outcome": "rejected", "reason": str(error)}
        if parsed.cluster_name != self._cluster:
            return self._result(
                parsed, "ignored", reason=f"event for another cluster ({parsed.cluster_name})"
            )
        if isinstance(parsed, NodeHealthEvent):
            return self._node_health(parsed)
        if isinstance(parsed, ClusterStateChange):
            return self._cluster_state(parsed)
        return self._cluster_event(parsed)

    def _node_health(self, event: NodeHealthEvent) -> dict[str, Any]:
        if event.health_status not in KNOWN_HEALTH_STATUSES:
            logger.info("unknown HealthStatus accepted", extra={"health_status": event.health_status})
        if event.repair_action not in KNOWN_REPAIR_ACTIONS:
            logger.info("unknown RepairAction accepted", extra={"repair_action": event.repair_action})
        if event.healthy:
            return self._result(event, "ignored", reason="node reported healthy")
        group = self._group_of_instance(event.cluster_name, event.instance_id)
        if group is None:
            return self._result(event, "ignored", reason="node is no longer in the cluster")
        if group == self._controller_group:
            reason = f"controller {event.instance_id} reported {event.health_status}: {event.reason}".strip(
                ": "
            )
            return self._verify(
                event, reason, {"instance_id": event.instance_id, "health": event.health_status}
            )
        tally = self._workers.record_unhealthy(event.cluster_name, event.instance_id)
        if tally.outcome != "threshold-crossed":
            return self._result(event, "counted", unhealthy_workers=tally.unhealthy, group=group)
        notice = Notification(
            subject=subject_line(f"HyperPod {event.cluster_name}: {tally.unhealthy} worker nodes unhealthy"),
            body=(
                f"{tally.unhealthy} worker nodes of cluster {event.cluster_name} reported unhealthy within "
                f"one window starting at epoch {tally.window_start}. Latest: {event.instance_id} "
                f"({event.health_status}, repair action {event.repair_action}): {event.reason}\n"
                "Further unhealthy workers in this window are counted without another notice."
            ),
        )
        try:
            self._notices.send(notice)
        except Exception:
            self._workers.forget(event.cluster_name, tally.window_start, event.instance_id)
            raise
        return self._result(event, "notified", unhealthy_workers=tally.unhealthy, group=group)

    def _cluster_state(self, event: ClusterStateChange) -> dict[str, Any]:
        if not event.alarming:
            return self._result(event, "ignored", reason=f"cluster status {event.status}")
        notice = Notification(
            subject=subject_line(f"HyperPod {event.cluster_name} is {event.status}"),
            body=(
                f"Cluster {event.cluster_name} changed status to {event.status}.\n"
                f"Failure message: {event.failure_message or '(none)'}\nEvent: {event.event_id}"
            ),
        )
        sent = self._notices.send_once(f"{event.cluster_name}#{event.event_id}", notice, int(self._clock()))
        return self._result(event, "notified" if sent else "duplicate")

    def _cluster_event(self, event: ClusterEvent) -> dict[str, Any]:
        if event.level != "Error":
            return self._result(event, "ignored", reason=f"event level {event.level}")
        group = event.group
        if group is None and event.instance_id:
            group = self._group_of_instance(event.cluster_name, event.instance_id)
        if group != self._controller_group:
            return self._result(event, "ignored", reason="error outside the controller group")
        reason = f"cluster event on the controller group: {event.description}".strip(": ")
        return self._verify(
            event, reason, {"instance_id": event.instance_id, "description": event.description}
        )

    def _verify(self, event: HyperPodEvent, reason: str, summary: dict[str, Any]) -> dict[str, Any]:
        trigger = Trigger(
            source="eventbridge",
            id=event.event_id,
            summary={"kind": type(event).__name__, **summary},
            time=trigger_time(event.time),
        )
        decision = self._runs.start_or_join(event.cluster_name, trigger, reason)
        return self._result(event, decision.outcome, execution_arn=decision.execution_arn)

    @staticmethod
    def _result(event: HyperPodEvent, outcome: str, **more: Any) -> dict[str, Any]:
        result = {"event_id": event.event_id, "kind": type(event).__name__, "outcome": outcome, **more}
        logger.info("hyperpod event handled", extra=result)
        return result
