"""NoticeFunction on the embedded stack: a failed rotation (a CloudTrail-shaped event through the
template's EventBridge rule) and an alarm's change become one message in the one form, once."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest

from hyperpod_ha import state_table
from hyperpod_ha.errors import ConfigurationError
from hyperpod_ha.notices.aws_events import NoticeRejected
from hyperpod_ha.notices.function import NoticeFunctionSettings
from hyperpod_ha.silences import Silences
from hyperpod_ha.topic_messages import check_form
from hyperpod_ha_dev.embedded.functions import FunctionError
from tests.conftest import EVENTS, Embedded, published


def event(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EVENTS / name).read_text())
    return loaded


def rotation_failed(embedded: Embedded) -> dict[str, Any]:
    raw = event("eventbridge_rotation_failed.json")
    raw["detail"]["additionalEventData"]["SecretId"] = embedded.site.secret_arn
    return raw


def alarm_changed(embedded: Embedded, name: str = "eventbridge_alarm_state_change.json") -> dict[str, Any]:
    raw = event(name)
    alarm = f"{embedded.stack.name}.WatchdogErrorsAlarm"
    raw["detail"]["alarmName"] = alarm
    raw["resources"] = [f"arn:aws:cloudwatch:us-east-1:123456789012:alarm:{alarm}"]
    return raw


def put(raw: dict[str, Any]) -> None:
    """As CloudTrail or CloudWatch would: through EventBridge and the template's rules."""
    boto3.client("events").put_events(
        Entries=[
            {
                "Source": raw["source"],
                "DetailType": raw["detail-type"],
                "Detail": json.dumps(raw["detail"]),
                "Resources": raw["resources"],
            }
        ]
    )


def messages(embedded: Embedded) -> list[Any]:
    return published(embedded.stack.outputs["NotificationTopicArn"])


def test_a_failed_rotation_through_the_rule_is_one_readable_message(embedded: Embedded) -> None:
    put(rotation_failed(embedded))
    (message,) = messages(embedded)
    check_form(message)
    assert message.attributes == {
        "cluster": "ml-cluster",
        "kind": "rotation-failed",
        "severity": "2",
        "event": "notice",
        "dedup_key": "hyperpod-ha:ml-cluster:rotation-failed",
        "level": "error",
    }
    assert (
        message.subject
        == "[hyperpod-ha] ml-cluster: rotation of the database secret failed (RotationFailed) (sev 2)"
    )
    assert embedded.site.secret_arn in message.body
    assert f"aws logs tail /aws/lambda/{embedded.stack.name}-RotateDbSecretFunction" in message.body
    assert '"eventVersion"' not in message.body


def test_the_same_event_twice_tells_once(embedded: Embedded) -> None:
    raw = rotation_failed(embedded)
    outcomes = [embedded.stack.invoke("NoticeFunction", raw)["outcome"] for _ in range(2)]
    assert outcomes == ["notified", "duplicate"]
    assert len(messages(embedded)) == 1
    marker = state_table.notice_key("ml-cluster", raw["id"])
    item = boto3.client("dynamodb").get_item(
        TableName=embedded.stack.ref("StateTable"), Key=state_table.key(marker)
    )
    assert "Item" in item


def test_another_secrets_rotation_is_refused_and_tells_nothing(embedded: Embedded) -> None:
    with pytest.raises(FunctionError, match="NoticeRejected: the event is about another secret"):
        embedded.stack.invoke("NoticeFunction", event("eventbridge_rotation_failed_other_secret.json"))
    assert messages(embedded) == []


def test_an_alarm_through_the_rule_is_one_message(embedded: Embedded) -> None:
    put(alarm_changed(embedded))
    (message,) = messages(embedded)
    check_form(message)
    assert message.attributes["kind"] == "alarm"
    assert message.attributes["event"] == "opened"
    assert message.subject == "[hyperpod-ha] ml-cluster: alarm WatchdogErrorsAlarm is ALARM (sev 2)"


def test_a_new_alarm_turning_ok_tells_nothing(embedded: Embedded) -> None:
    raw = alarm_changed(embedded, "eventbridge_alarm_created_ok.json")
    assert embedded.stack.invoke("NoticeFunction", raw)["outcome"] == "ignored"
    assert messages(embedded) == []


def _named(embedded: Embedded, alarm: str) -> dict[str, Any]:
    raw = alarm_changed(embedded)
    raw["detail"]["alarmName"] = alarm
    raw["resources"] = [f"arn:aws:cloudwatch:us-east-1:123456789012:alarm:{alarm}"]
    return raw


def test_the_notice_paths_own_alarms_are_not_told(embedded: Embedded) -> None:
    raw = _named(embedded, f"{embedded.stack.name}.NoticeErrorsAlarm")
    put(raw)  # the rule leaves it out
    assert embedded.stack.invoke("NoticeFunction", raw)["outcome"] == "ignored"  # and so does the code
    assert messages(embedded) == []


@pytest.mark.parametrize(
    "alarm",
    [
        "{stack}.Forged",  # anyone allowed PutMetricAlarm can name an alarm so
        "{stack}.WatchdogErrorsAlarm.Forged",
        "{stack}.",
        "{stack}-other.WatchdogErrorsAlarm",
        "other-stack.WatchdogErrorsAlarm",
        "WatchdogErrorsAlarm",
    ],
)
def test_an_alarm_the_stack_did_not_create_is_refused_and_tells_nothing(
    embedded: Embedded, alarm: str
) -> None:
    raw = _named(embedded, alarm.format(stack=embedded.stack.name))
    put(raw)  # through EventBridge: a forged name under the stack's prefix reaches the function
    with pytest.raises(FunctionError, match="NoticeRejected: the alarm is not one of this stack's alarms"):
        embedded.stack.invoke("NoticeFunction", raw)
    assert messages(embedded) == []


def test_every_alarm_the_stack_created_is_told(embedded: Embedded) -> None:
    created = {
        logical_id
        for logical_id, resource in embedded.stack.resources.items()
        if resource.type == "AWS::CloudWatch::Alarm"
    }
    told = created - {"NoticeErrorsAlarm", "NoticeThrottlesAlarm", "NoticeDeadLetterQueueAlarm"}
    assert "WatchdogErrorsAlarm" in told
    for logical_id in sorted(told):
        raw = _named(embedded, f"{embedded.stack.name}.{logical_id}")
        raw["id"] = f"{raw['id']}-{logical_id}"  # each its own event, told once
        answer = embedded.stack.invoke("NoticeFunction", raw)
        assert answer["outcome"] == "notified", logical_id
    assert len(messages(embedded)) == len(told)


def test_garbage_is_a_typed_reject(embedded: Embedded) -> None:
    for garbage in (
        {},
        {"id": "x", "account": "123456789012", "region": "us-east-1"},
        event("eventbridge_malformed.json"),
    ):
        with pytest.raises(FunctionError, match=NoticeRejected.__name__):
            embedded.stack.invoke("NoticeFunction", garbage)
    assert messages(embedded) == []


SETTINGS = {
    "CLUSTER_NAME": "ml-cluster",
    "NOTIFICATION_TOPIC_ARN": "arn:aws:sns:us-east-1:123456789012:t",
    "STATE_TABLE": "s",
    "DB_SECRET_ARN": "arn:aws:secretsmanager:us-east-1:123456789012:secret:s-AbCdEf",
    "ROTATION_LOG_GROUP": "/aws/lambda/x",
    "STACK_ACCOUNT_ID": "123456789012",
    "AWS_REGION": "us-east-1",
    "ALARM_NAME_PREFIX": "hyperpod-ha.",
    "TOLD_ALARMS": "WatchdogErrorsAlarm, IncidentErrorsAlarm",
}


@pytest.mark.parametrize("missing", ["ALARM_NAME_PREFIX", "TOLD_ALARMS"])
def test_a_missing_setting_is_named(missing: str) -> None:
    with pytest.raises(ConfigurationError, match=missing):
        NoticeFunctionSettings.from_environment({k: v for k, v in SETTINGS.items() if k != missing})


@pytest.mark.parametrize("told", [",", "Watchdog.ErrorsAlarm", "a b", "*"])
def test_a_told_alarm_that_is_not_a_logical_id_is_a_bad_setting(told: str) -> None:
    with pytest.raises(ConfigurationError, match="TOLD_ALARMS must list"):
        NoticeFunctionSettings.from_environment({**SETTINGS, "TOLD_ALARMS": told})


def test_the_told_alarms_are_read_as_a_set() -> None:
    settings = NoticeFunctionSettings.from_environment(SETTINGS)
    assert settings.told_alarms == frozenset({"WatchdogErrorsAlarm", "IncidentErrorsAlarm"})


def test_a_failed_publish_forgets_the_marker_so_the_retry_tells(embedded: Embedded) -> None:
    raw = rotation_failed(embedded)
    topic = embedded.stack.outputs["NotificationTopicArn"]
    boto3.client("sns").delete_topic(TopicArn=topic)
    with pytest.raises(FunctionError, match="NotFound"):
        embedded.stack.invoke("NoticeFunction", raw)
    marker = state_table.notice_key("ml-cluster", raw["id"])
    item = boto3.client("dynamodb").get_item(
        TableName=embedded.stack.ref("StateTable"), Key=state_table.key(marker)
    )
    assert "Item" not in item


def test_the_alarm_rule_matches_the_stacks_alarms_but_the_notice_paths_own(embedded: Embedded) -> None:
    # moto's own matcher (its TestEventPattern answers nothing), the one that routes put_events.
    from moto.events.models import EventPattern

    events = boto3.client("events")
    (rule,) = [r for r in events.list_rules()["Rules"] if r["Name"].endswith("AlarmStateChanged")]
    pattern = EventPattern.load(rule["EventPattern"])

    def matches(alarm: str) -> bool:
        raw = alarm_changed(embedded)
        raw["detail"]["alarmName"] = alarm
        raw["resources"] = [f"arn:aws:cloudwatch:us-east-1:123456789012:alarm:{alarm}"]
        return pattern.matches_event(raw)

    stack = embedded.stack.name
    assert matches(f"{stack}.WatchdogErrorsAlarm")
    assert matches(f"{stack}.VerificationExecutionsFailedAlarm")
    for own in ("NoticeErrorsAlarm", "NoticeThrottlesAlarm", "NoticeDeadLetterQueueAlarm"):
        assert not matches(f"{stack}.{own}"), own
    assert not matches(f"{stack}-other.WatchdogErrorsAlarm")
    assert not matches("someone-elses-alarm")


def test_in_a_silence_nothing_is_told_then_the_next_event_is(embedded: Embedded) -> None:
    silences = Silences(boto3.client("dynamodb"), embedded.stack.ref("StateTable"))
    silences.start("ml-cluster", 3600, "database maintenance", "arn:aws:iam::123456789012:user/bob")
    raw = rotation_failed(embedded)
    answer = embedded.stack.invoke("NoticeFunction", raw)
    assert (answer["outcome"], answer["silenced"]["reason"]) == ("silenced", "database maintenance")
    assert messages(embedded) == []
    silences.end("ml-cluster", "arn:aws:iam::123456789012:user/bob")
    assert embedded.stack.invoke("NoticeFunction", {**raw, "id": raw["id"] + "-2"})["outcome"] == "notified"
    assert len(messages(embedded)) == 1
