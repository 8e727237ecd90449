"""NoticeFunction's events read into typed values, and their messages: a failed rotation from a
CloudTrail-shaped event, an alarm's change; anything else a typed reject."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from hyperpod_ha.notices import messages
from hyperpod_ha.notices.aws_events import (
    AlarmChange,
    NoticeRejected,
    RotationEvent,
    check_origin,
    parse_notice_event,
)
from hyperpod_ha.notices.messages import Stack
from hyperpod_ha.topic_messages import check_form
from tests.conftest import EVENTS

SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:ml-cluster-slurmdbd-HGZcWv"
STACK = Stack("ml-cluster", "us-east-1", "hyperpod-ha.", "/aws/lambda/hyperpod-ha-RotateDbSecretFunction")
NOW = 1_796_005_000.0  # 2026-11-30 02:16:40 UTC


def _event(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EVENTS / name).read_text())
    return loaded


def test_a_rotation_failure_from_cloudtrail() -> None:
    parsed = parse_notice_event(_event("eventbridge_rotation_failed.json"))
    assert parsed == RotationEvent(
        "5e1f7a3c-2b4d-4f6e-8a9c-0d1e2f3a4b5c", "RotationFailed", SECRET, 1_796_004_847.0
    )


def test_the_rotation_failure_reads_as_a_message_not_raw_json() -> None:
    parsed = parse_notice_event(_event("eventbridge_rotation_failed.json"))
    assert isinstance(parsed, RotationEvent)
    message = messages.rotation_failed(parsed, STACK, NOW)
    check_form(message)
    assert message.subject == (
        "[hyperpod-ha] ml-cluster: rotation of the database secret failed (RotationFailed) (sev 2)"
    )
    assert message.attributes == {
        "cluster": "ml-cluster",
        "kind": "rotation-failed",
        "severity": "2",
        "event": "notice",
        "dedup_key": "hyperpod-ha:ml-cluster:rotation-failed",
        "level": "error",
    }
    body = message.body
    assert "eventVersion" not in body  # no CloudTrail JSON
    assert "When:    2 min 33 s ago (2026-11-30 02:14 UTC)" in body
    assert (
        "aws logs tail /aws/lambda/hyperpod-ha-RotateDbSecretFunction --since 1h --region us-east-1" in body
    )
    assert f"aws secretsmanager describe-secret --secret-id {SECRET} --region us-east-1" in body
    assert "secretsmanager/secret?name=ml-cluster-slurmdbd&region=us-east-1" in body


def test_an_abandoned_rotation_is_less_severe() -> None:
    event = _event("eventbridge_rotation_failed.json")
    event["detail"]["eventName"] = "RotationAbandoned"
    parsed = parse_notice_event(event)
    assert isinstance(parsed, RotationEvent)
    message = messages.rotation_failed(parsed, STACK, NOW)
    assert message.attributes["severity"] == "3"
    assert "abandoned" in message.subject


def test_an_alarm_change() -> None:
    parsed = parse_notice_event(_event("eventbridge_alarm_state_change.json"))
    assert isinstance(parsed, AlarmChange)
    assert (parsed.alarm_name, parsed.state, parsed.previous) == (
        "hyperpod-ha.WatchdogErrorsAlarm",
        "ALARM",
        "OK",
    )
    assert parsed.time == pytest.approx(1_796_005_241.205)
    message = messages.alarm_changed(parsed, STACK, NOW + 600)
    check_form(message)
    assert message.subject == "[hyperpod-ha] ml-cluster: alarm WatchdogErrorsAlarm is ALARM (sev 2)"
    assert message.attributes["event"] == "opened"
    assert "WatchdogFunction raised errors (see its log group)." in message.body
    assert (
        "aws logs tail /aws/lambda/hyperpod-ha-WatchdogFunction --since 1h --region us-east-1" in message.body
    )
    assert "Threshold Crossed: 1 out of the last 1 datapoints" in message.body


def test_an_alarm_back_to_ok_resolves_with_the_same_severity() -> None:
    event = _event("eventbridge_alarm_state_change.json")
    event["detail"]["state"], event["detail"]["previousState"] = (
        {**event["detail"]["previousState"], "value": "OK"},
        {**event["detail"]["state"], "value": "ALARM"},
    )
    parsed = parse_notice_event(event)
    assert isinstance(parsed, AlarmChange)
    message = messages.alarm_changed(parsed, STACK, NOW)
    assert message.subject == "[hyperpod-ha] ml-cluster: alarm WatchdogErrorsAlarm is OK again (sev 2)"
    assert message.attributes["event"] == "resolved"


@pytest.mark.parametrize(
    ("logical_id", "hint"),
    [
        (
            "HyperPodEventThrottlesAlarm",
            "HyperPodEventFunction, its log: `aws logs tail /aws/lambda/hyperpod-ha-HyperPodEventFunction",
        ),
        ("WatchdogDeadLetterQueueAlarm", "the messages in WatchdogDeadLetterQueue"),
        (
            "VerificationExecutionsFailedAlarm",
            "the failed, timed-out or stopped executions of the state machine",
        ),
        ("NoStandbyReadyAlarm", "the redundancy-lost incident and `hyperpod-ha status`"),
    ],
)
def test_each_alarm_says_where_to_look_first(logical_id: str, hint: str) -> None:
    event = _event("eventbridge_alarm_state_change.json")
    event["detail"]["alarmName"] = f"hyperpod-ha.{logical_id}"
    parsed = parse_notice_event(event)
    assert isinstance(parsed, AlarmChange)
    assert hint in messages.alarm_changed(parsed, STACK, NOW).body


def _broken(change: Any) -> dict[str, Any]:
    event = copy.deepcopy(_event("eventbridge_rotation_failed.json"))
    change(event)
    return event


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        (_event("eventbridge_malformed.json"), "not handled"),
        (_broken(lambda e: e["detail"].update(eventName="RotationSucceeded")), "not a failed or abandoned"),
        (_broken(lambda e: e["detail"].pop("additionalEventData")), "additionalEventData is missing"),
        (_broken(lambda e: e["detail"]["additionalEventData"].update(SecretId="s" * 300)), "longer than 256"),
        (_broken(lambda e: e.update(id=None)), "event.id is missing"),
        (_broken(lambda e: e.update(detail="x")), "detail is missing or not an object"),
    ],
)
def test_anything_else_is_a_typed_reject(event: dict[str, Any], reason: str) -> None:
    with pytest.raises(NoticeRejected, match=reason):
        parse_notice_event(event)


def test_an_alarm_in_no_known_state_is_refused() -> None:
    event = _event("eventbridge_alarm_state_change.json")
    event["detail"]["state"]["value"] = "BROKEN"
    with pytest.raises(NoticeRejected, match="not an alarm state"):
        parse_notice_event(event)


def test_free_text_is_bounded() -> None:
    event = _event("eventbridge_alarm_state_change.json")
    event["detail"]["state"]["reason"] = "r" * 100_000
    event["detail"]["configuration"]["description"] = "d" * 100_000
    parsed = parse_notice_event(event)
    assert isinstance(parsed, AlarmChange)
    assert len(parsed.reason) <= 2048
    assert len(parsed.description) <= 2048


@pytest.mark.parametrize(
    ("account", "region"), [("210987654321", "us-east-1"), ("123456789012", "eu-west-1")]
)
def test_events_of_another_account_or_region_are_refused(account: str, region: str) -> None:
    with pytest.raises(NoticeRejected, match="account and region"):
        check_origin(_event("eventbridge_rotation_failed.json"), account, region)


def test_no_standby_ready_is_told_with_its_incident_s_severity() -> None:
    event = _event("eventbridge_alarm_state_change.json")
    event["detail"]["alarmName"] = "hyperpod-ha.NoStandbyReadyAlarm"
    parsed = parse_notice_event(event)
    assert isinstance(parsed, AlarmChange)
    message = messages.alarm_changed(parsed, STACK, NOW)
    assert message.attributes["severity"] == "3"
    assert message.subject.endswith("(sev 3)")
