"""Outside input at ten times its bounds, in what people are told: NoticeFunction's events and an
incident's request give a bounded message or a typed reject, never a cut-off page."""

from __future__ import annotations

import pytest

from hyperpod_ha.request_fields import CUT_MARK, MAX_ID_CHARS, MAX_TEXT_CHARS
from hyperpod_ha_dev.embedded.functions import FunctionError
from tests.conftest import Embedded, published
from tests.functions.test_outside_input_bounds import LONG_ID, LONG_TEXT, sample


@pytest.mark.parametrize("field", ["id", "alarmName"])
def test_an_alarm_id_at_ten_times_its_bound_is_rejected_and_tells_nothing(
    embedded: Embedded, field: str
) -> None:
    event = sample("eventbridge_alarm_state_change.json")
    (event if field == "id" else event["detail"])[field] = LONG_ID
    with pytest.raises(FunctionError, match=f"longer than {MAX_ID_CHARS}"):
        embedded.stack.invoke("NoticeFunction", event)
    assert published(embedded.stack.outputs["NotificationTopicArn"]) == []


def test_an_alarms_free_text_at_ten_times_its_bound_is_told_as_an_excerpt(embedded: Embedded) -> None:
    event = sample("eventbridge_alarm_state_change.json")
    event["detail"]["alarmName"] = f"{embedded.stack.name}.WatchdogErrorsAlarm"
    event["detail"]["state"]["reason"] = "r" * (10 * 256 * 1024)  # ten times SNS's whole limit
    event["detail"]["configuration"]["description"] = LONG_TEXT
    assert embedded.stack.invoke("NoticeFunction", event)["outcome"] == "notified"
    (message,) = published(embedded.stack.outputs["NotificationTopicArn"])
    assert CUT_MARK in message.body
    assert len(message.body.encode()) < 3 * MAX_TEXT_CHARS


def test_an_incidents_trigger_and_evidence_at_ten_times_their_bounds_give_a_bounded_message(
    embedded: Embedded,
) -> None:
    evidence = {
        f"ctl{i}" * 100: {"instance_id": LONG_ID, "address": LONG_TEXT, "target": LONG_ID} for i in range(64)
    }
    embedded.stack.invoke(
        "IncidentFunction",
        {
            "action": "open",
            "cluster": "ml-cluster",
            "verdict": "DOWN",
            "execution_id": "e-1",
            "reasons": [LONG_TEXT] * 100,
            "evidence": evidence,
            "problem": LONG_TEXT,
            "trigger": {"source": LONG_TEXT, "id": LONG_ID, "time": LONG_TEXT},
            "run_reason": LONG_TEXT,
        },
    )
    (message,) = published(embedded.stack.outputs["NotificationTopicArn"])
    assert len(message.body.encode()) <= 256 * 1024 - 4096
    assert "… " in message.body  # the reasons past the bound are counted, not dropped silently
    assert max(len(line) for line in message.body.splitlines()) < 3 * MAX_TEXT_CHARS
    assert len(message.subject) < 100
