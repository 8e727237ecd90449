"""NoticeFunction and its settings: an AWS event the stack tells people about (a failed rotation
of the database secret, a state change of one of the stack's alarms) -> one message in the one
form on the notification topic, once per event (a marker in the state table)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Final

from hyperpod_ha.environment import Settings, Text
from hyperpod_ha.notices import messages
from hyperpod_ha.notices.aws_events import AlarmChange, NoticeRejected, check_origin, parse_notice_event
from hyperpod_ha.notices.messages import Stack
from hyperpod_ha.observability import logger, metrics
from hyperpod_ha.topic_messages import TopicMessage
from hyperpod_ha.topic_publisher import TopicPublisher

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

# A redelivered event finds its marker for a day (EventBridge retries for at most 24 h).
NOTICE_TTL_SECONDS: Final = 86_400
# The notice path's own alarms publish to the topic themselves: a broken NoticeFunction cannot
# tell about itself (the template's rule leaves them out too).
OWN_ALARMS: Final = frozenset({"NoticeErrorsAlarm", "NoticeThrottlesAlarm", "NoticeDeadLetterQueueAlarm"})


@dataclass(frozen=True)
class NoticeFunctionSettings(Settings):
    """NoticeFunction's environment."""

    cluster: Annotated[str, Text("CLUSTER_NAME")]
    topic_arn: Annotated[str, Text("NOTIFICATION_TOPIC_ARN")]
    state_table: Annotated[str, Text("STATE_TABLE")]
    # Only this secret's rotation events are told (the rule matches no other).
    secret_arn: Annotated[str, Text("DB_SECRET_ARN")]
    # "<stack name>.": every alarm of the stack is named so, and only those are told.
    alarm_prefix: Annotated[str, Text("ALARM_NAME_PREFIX")]
    rotation_log_group: Annotated[str, Text("ROTATION_LOG_GROUP")]
    # The stack's own account and region: events from elsewhere are refused.
    account: Annotated[str, Text("STACK_ACCOUNT_ID")]
    region: Annotated[str, Text("AWS_REGION", Text("AWS_DEFAULT_REGION"))]


@dataclass(frozen=True)
class NoticeFunction:
    publisher: TopicPublisher
    stack: Stack
    secret_arn: str
    account: str
    clock: Callable[[], float] = time.time

    @classmethod
    def from_settings(cls, settings: NoticeFunctionSettings) -> NoticeFunction:
        import boto3

        publisher = TopicPublisher(
            boto3.client("sns"),
            settings.topic_arn,
            boto3.client("dynamodb"),
            settings.state_table,
            NOTICE_TTL_SECONDS,
        )
        stack = Stack(settings.cluster, settings.region, settings.alarm_prefix, settings.rotation_log_group)
        return cls(publisher, stack, settings.secret_arn, settings.account)

    def handle(self, event: Any, context: LambdaContext) -> dict[str, Any]:
        """The event told once, or ignored; bad input raises :class:`NoticeRejected` (logged, then
        kept in the dead-letter queue once Lambda's retries are spent)."""
        try:
            parsed = parse_notice_event(check_origin(event, self.account, self.stack.region))
        except NoticeRejected as error:
            event_id = event.get("id") if isinstance(event, dict) else None
            logger.warning("event rejected", extra={"event_id": str(event_id)[:256], "reason": str(error)})
            metrics.add_metric(name="NoticesRejected", unit="Count", value=1)
            raise
        now = self.clock()
        message: TopicMessage
        if isinstance(parsed, AlarmChange):
            ignored = self._ignored(parsed)
            if ignored:
                logger.info("alarm change not told", extra={"alarm": parsed.alarm_name, "reason": ignored})
                metrics.add_metric(name="NoticesIgnored", unit="Count", value=1)
                return {"event_id": parsed.event_id, "outcome": "ignored", "reason": ignored}
            message = messages.alarm_changed(parsed, self.stack, now)
        else:
            if parsed.secret_arn != self.secret_arn:
                logger.warning(
                    "event rejected", extra={"event_id": parsed.event_id, "reason": "another secret"}
                )
                metrics.add_metric(name="NoticesRejected", unit="Count", value=1)
                raise NoticeRejected("the event is about another secret than this stack's")
            message = messages.rotation_failed(parsed, self.stack, now)
        sent = self.publisher.publish_once(self.stack.cluster, parsed.event_id, message, int(now))
        outcome = "notified" if sent else "duplicate"
        metrics.add_metric(name=f"Notices{outcome.capitalize()}", unit="Count", value=1)
        logger.info("notice handled", extra={"event_id": parsed.event_id, "outcome": outcome})
        return {"event_id": parsed.event_id, "outcome": outcome, "kind": message.attributes["kind"]}

    def _ignored(self, change: AlarmChange) -> str | None:
        """Why an alarm change is not told: not this stack's, the notice path's own, or no news."""
        if not change.alarm_name.startswith(self.stack.alarm_prefix):
            return "not an alarm of this stack"
        if change.alarm_name.removeprefix(self.stack.alarm_prefix) in OWN_ALARMS:
            return "the notice path's own alarm publishes to the topic itself"
        if change.state == "INSUFFICIENT_DATA" or (change.state == "OK" and change.previous != "ALARM"):
            return f"{change.previous or 'no state'} -> {change.state}: nothing happened"
        return None
