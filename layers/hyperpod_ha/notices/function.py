"""NoticeFunction and its settings: an AWS event the stack tells people about (a failed rotation
of the database secret, a state change of one of the stack's alarms) -> one message in the one
form on the notification topic, once per event (a marker in the state table)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Final

from hyperpod_ha.environment import Settings, Text, Variable
from hyperpod_ha.notices import messages
from hyperpod_ha.notices.aws_events import AlarmChange, NoticeRejected, check_origin, parse_notice_event
from hyperpod_ha.notices.messages import Stack
from hyperpod_ha.observability import logger, metrics
from hyperpod_ha.topic_messages import TopicMessage
from hyperpod_ha.topic_messages.publisher import TopicPublisher

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

# A redelivered event finds its marker for a day (EventBridge retries for at most 24 h).
NOTICE_TTL_SECONDS: Final = 86_400
# The notice path's own alarms publish to the topic themselves: a broken NoticeFunction cannot
# tell about itself (the template's rule leaves them out too).
OWN_ALARMS: Final = frozenset({"NoticeErrorsAlarm", "NoticeThrottlesAlarm", "NoticeDeadLetterQueueAlarm"})
_LOGICAL_ID: Final = re.compile(r"[A-Za-z0-9]{1,255}")


@dataclass(frozen=True, kw_only=True)
class _LogicalIds(Variable[frozenset[str]]):
    """Comma-separated logical ids (the template's ``ToldAlarms`` mapping, generated from the one
    table of alarms): at least one, each a CloudFormation logical id."""

    def parse(self, raw: str) -> frozenset[str]:
        ids = frozenset(part.strip() for part in raw.split(",") if part.strip())
        if not ids or not all(_LOGICAL_ID.fullmatch(logical_id) for logical_id in ids):
            raise self.refused("must list the told alarms' logical ids, separated by commas")
        return ids


@dataclass(frozen=True)
class NoticeFunctionSettings(Settings):
    """NoticeFunction's environment."""

    cluster: Annotated[str, Text("CLUSTER_NAME")]
    topic_arn: Annotated[str, Text("NOTIFICATION_TOPIC_ARN")]
    state_table: Annotated[str, Text("STATE_TABLE")]
    # Only this secret's rotation events are told (the rule matches no other).
    secret_arn: Annotated[str, Text("DB_SECRET_ARN")]
    # "<stack name>.": every alarm of the stack is named "<stack name>.<logical id>".
    alarm_prefix: Annotated[str, Text("ALARM_NAME_PREFIX")]
    # The logical ids of the alarms the stack created and this function tells (written by the
    # alarms' generator, as the alarms themselves): an alarm named with the prefix but another id,
    # which anyone allowed PutMetricAlarm can create, is refused.
    told_alarms: Annotated[frozenset[str], _LogicalIds("TOLD_ALARMS")]
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
    told_alarms: frozenset[str]
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
        return cls(publisher, stack, settings.secret_arn, settings.account, settings.told_alarms)

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
            self._check_own_alarm(parsed)
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
        silence = self.publisher.silenced(self.stack.cluster)
        if silence is not None:
            metrics.add_metric(name="NoticesSilenced", unit="Count", value=1)
            logger.info("notice not published: silenced", extra={"event_id": parsed.event_id})
            kind = message.attributes["kind"]
            return {
                "event_id": parsed.event_id,
                "outcome": "silenced",
                "kind": kind,
                "silenced": silence.to_json(),
            }
        sent = self.publisher.publish_once(self.stack.cluster, parsed.event_id, message, int(now))
        outcome = "notified" if sent else "duplicate"
        metrics.add_metric(name=f"Notices{outcome.capitalize()}", unit="Count", value=1)
        logger.info("notice handled", extra={"event_id": parsed.event_id, "outcome": outcome})
        return {"event_id": parsed.event_id, "outcome": outcome, "kind": message.attributes["kind"]}

    def _check_own_alarm(self, change: AlarmChange) -> None:
        """:class:`NoticeRejected` unless the alarm is one the stack created: its name exactly
        ``<stack>.<logical id>`` of a told alarm or of the notice path's own (a name that only
        starts so is anyone's)."""
        logical_id = change.alarm_name.removeprefix(self.stack.alarm_prefix)
        if logical_id == change.alarm_name or logical_id not in self.told_alarms | OWN_ALARMS:
            logger.warning(
                "event rejected",
                extra={"event_id": change.event_id, "reason": "not an alarm of this stack"},
            )
            metrics.add_metric(name="NoticesRejected", unit="Count", value=1)
            raise NoticeRejected("the alarm is not one of this stack's alarms")

    def _ignored(self, change: AlarmChange) -> str | None:
        """Why one of the stack's alarm changes is not told: the notice path's own, or no news."""
        if change.alarm_name.removeprefix(self.stack.alarm_prefix) in OWN_ALARMS:
            return "the notice path's own alarm publishes to the topic itself"
        if change.state == "INSUFFICIENT_DATA" or (change.state == "OK" and change.previous != "ALARM"):
            return f"{change.previous or 'no state'} -> {change.state}: nothing happened"
        return None
