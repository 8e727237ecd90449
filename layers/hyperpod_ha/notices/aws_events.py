"""The AWS events NoticeFunction is sent, as typed values: Secrets Manager's RotationFailed or
RotationAbandoned (an "AWS Service Event via CloudTrail") and CloudWatch's "Alarm State Change".
Every field is bounded; anything else is a :class:`NoticeRejected`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from hyperpod_ha.errors import InputRejected
from hyperpod_ha.human_time import parse_utc
from hyperpod_ha.request_fields import MAX_ID_CHARS, bounded_text

ROTATION_EVENTS: Final = frozenset({"RotationFailed", "RotationAbandoned"})
ALARM_STATES: Final = frozenset({"OK", "ALARM", "INSUFFICIENT_DATA"})
CLOUDTRAIL: Final = "AWS Service Event via CloudTrail"
ALARM_CHANGE: Final = "CloudWatch Alarm State Change"


class NoticeRejected(InputRejected):
    """Not an event NoticeFunction tells people about. The reason is safe to log."""


@dataclass(frozen=True)
class RotationEvent:
    event_id: str
    name: str  # RotationFailed or RotationAbandoned
    secret_arn: str
    time: float | None


@dataclass(frozen=True)
class AlarmChange:
    event_id: str
    alarm_name: str
    description: str
    state: str
    previous: str
    reason: str
    time: float | None


def _id(container: Mapping[str, Any], key: str, where: str) -> str:
    value = container.get(key)
    if not isinstance(value, str) or not value.strip():
        raise NoticeRejected(f"{where}.{key} is missing or not a non-empty string")
    if len(value) > MAX_ID_CHARS:
        raise NoticeRejected(f"{where}.{key} is longer than {MAX_ID_CHARS} characters")
    return value.strip()


def _object(container: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = container.get(key)
    if not isinstance(value, Mapping):
        raise NoticeRejected(f"{where}.{key} is missing or not an object")
    return value


def _free_text(value: object) -> str:
    return bounded_text(value.strip()) if isinstance(value, str) else ""


def check_origin(event: object, account: str, region: str) -> Mapping[str, Any]:
    """The event, when it came from this stack's own account and region."""
    if not isinstance(event, Mapping):
        raise NoticeRejected("event is not a JSON object")
    if event.get("account") != account or event.get("region") != region:
        raise NoticeRejected("event is not from this stack's account and region")
    return event


def parse_notice_event(event: Mapping[str, Any]) -> RotationEvent | AlarmChange:
    detail_type, event_id = event.get("detail-type"), _id(event, "id", "event")
    detail = _object(event, "detail", "event")
    if event.get("source") == "aws.secretsmanager" and detail_type == CLOUDTRAIL:
        name = _id(detail, "eventName", "detail")
        if name not in ROTATION_EVENTS:
            raise NoticeRejected(f"eventName {name[:40]!r} is not a failed or abandoned rotation")
        secret = _id(_object(detail, "additionalEventData", "detail"), "SecretId", "additionalEventData")
        return RotationEvent(event_id, name, secret, parse_utc(detail.get("eventTime") or event.get("time")))
    if event.get("source") == "aws.cloudwatch" and detail_type == ALARM_CHANGE:
        state, previous = _object(detail, "state", "detail"), detail.get("previousState")
        value = _id(state, "value", "state")
        if value not in ALARM_STATES:
            raise NoticeRejected(f"state {value[:20]!r} is not an alarm state")
        was = previous.get("value") if isinstance(previous, Mapping) else None
        configuration = detail.get("configuration")
        return AlarmChange(
            event_id=event_id,
            alarm_name=_id(detail, "alarmName", "detail"),
            description=_free_text(
                configuration.get("description") if isinstance(configuration, Mapping) else ""
            ),
            state=value,
            previous=was if isinstance(was, str) and was in ALARM_STATES else "",
            reason=_free_text(state.get("reason")),
            time=parse_utc(state.get("timestamp") or event.get("time")),
        )
    raise NoticeRejected(
        f"detail-type {str(detail_type)[:80]!r} of {str(event.get('source'))[:40]!r} is not handled"
    )
