"""IncidentFunction's settings: read from the environment once, each bad variable named."""

from __future__ import annotations

import pytest

from hyperpod_ha.errors import ConfigurationError
from hyperpod_ha.incidents import IncidentSettings
from hyperpod_ha.incidents.function import IncidentFunctionSettings

TOPIC = "arn:aws:sns:us-west-2:123456789012:hyperpod-ha"
PLAN = "arn:aws:ssm-incidents::123456789012:response-plan/hyperpod"
RESTORES = "arn:aws:states:us-west-2:123456789012:stateMachine:hyperpod-ha-redundancy-restore"


def test_the_template_s_variables_are_read() -> None:
    settings = IncidentFunctionSettings.from_environment(
        {
            "AWS_REGION": "us-west-2",
            "NOTIFICATION_TOPIC_ARN": TOPIC,
            "INCIDENT_RESPONSE_PLAN_ARN": PLAN,
            "IDEMPOTENCY_TABLE": "idempotency",
            "STATE_TABLE": "state",
            "RESTORE_STATE_MACHINE_ARN": RESTORES,
        }
    )
    assert settings == IncidentFunctionSettings(
        IncidentSettings("us-west-2", TOPIC, PLAN, 3600, "state"),
        idempotency_table="idempotency",
        state_table="state",
        restore_state_machine_arn=RESTORES,
    )


def test_missing_optional_variables_leave_their_parts_out() -> None:
    # The template gives an empty response plan when none is configured.
    settings = IncidentFunctionSettings.from_environment(
        {"AWS_DEFAULT_REGION": "eu-west-1", "INCIDENT_RESPONSE_PLAN_ARN": ""}
    )
    assert settings == IncidentFunctionSettings(IncidentSettings("eu-west-1"))


@pytest.mark.parametrize(
    ("name", "value"),
    [("NOTIFICATION_TOPIC_ARN", "hyperpod-ha"), ("INCIDENT_RESPONSE_PLAN_ARN", TOPIC)],
)
def test_a_malformed_arn_is_named(name: str, value: str) -> None:
    with pytest.raises(ConfigurationError, match=name):
        IncidentSettings.from_environment({"AWS_REGION": "us-west-2", name: value})


@pytest.mark.parametrize(("minutes", "seconds"), [("0", 0), ("", 3600), ("1", 60), ("10080", 604_800)])
def test_reminder_minutes_are_read_in_seconds(minutes: str, seconds: int) -> None:
    settings = IncidentSettings.from_environment({"AWS_REGION": "us-west-2", "REMINDER_MINUTES": minutes})
    assert settings.reminder_seconds == seconds


@pytest.mark.parametrize("minutes", ["-1", "10081", "an hour"])
def test_reminder_minutes_out_of_bounds_are_named(minutes: str) -> None:
    with pytest.raises(ConfigurationError, match="REMINDER_MINUTES"):
        IncidentSettings.from_environment({"AWS_REGION": "us-west-2", "REMINDER_MINUTES": minutes})
