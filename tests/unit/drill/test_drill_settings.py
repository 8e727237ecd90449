"""FailoverDrillFunction's settings: the template's environment, and errors naming a bad variable."""

from __future__ import annotations

import pytest

from hyperpod_ha.drill.function import FailoverDrillFunctionSettings
from hyperpod_ha.errors import ConfigurationError

ENVIRONMENT = {
    "CLUSTER_NAME": "ml-cluster",
    "CONTROLLER_GROUP": "controller-machine",
    "STATE_TABLE": "state",
    "NOTIFICATION_TOPIC_ARN": "arn:aws:sns:us-east-1:123456789012:topic",
    "INCIDENT_RESPONSE_PLAN_ARN": "",
    "COMMAND_TRANSPORT": "session-manager",
    "TAKEOVER_DOCUMENT": "takeover-doc",
    "JOBS_DOCUMENT": "jobs-doc",
    "ACCOUNTING_DOCUMENT": "accounting-doc",
    "DRILL_COMMAND_DEADLINE_SECONDS": "60",
    "DRILL_STATE_MACHINE_ARN": "arn:aws:states:eu-west-1:123456789012:stateMachine:ha-failover-drill",
    "AWS_REGION": "eu-west-1",
}


def test_the_template_s_environment() -> None:
    settings = FailoverDrillFunctionSettings.from_environment(ENVIRONMENT)
    assert (
        settings.acting.state_table,
        settings.takeover_document,
        settings.jobs_document,
        settings.accounting_document,
    ) == ("state", "takeover-doc", "jobs-doc", "accounting-doc")
    assert (settings.acting.cluster, settings.acting.controller_group) == ("ml-cluster", "controller-machine")
    assert (settings.command_deadline_seconds, settings.acting.lease_seconds) == (60.0, 3600)
    assert settings.incidents.topic_arn == "arn:aws:sns:us-east-1:123456789012:topic"
    assert (settings.incidents.region, settings.incidents.response_plan_arn) == ("eu-west-1", None)
    assert settings.state_machine_arn == ENVIRONMENT["DRILL_STATE_MACHINE_ARN"]


@pytest.mark.parametrize(
    "name",
    [
        "CLUSTER_NAME",
        "CONTROLLER_GROUP",
        "STATE_TABLE",
        "TAKEOVER_DOCUMENT",
        "JOBS_DOCUMENT",
        "ACCOUNTING_DOCUMENT",
        "DRILL_STATE_MACHINE_ARN",
    ],
)
def test_a_missing_variable_is_named(name: str) -> None:
    with pytest.raises(ConfigurationError, match=f"{name} is not set"):
        FailoverDrillFunctionSettings.from_environment({**ENVIRONMENT, name: ""})


@pytest.mark.parametrize(
    ("name", "value", "reason"),
    [
        ("DRILL_COMMAND_DEADLINE_SECONDS", "soon", "is not an integer"),
        ("DRILL_COMMAND_DEADLINE_SECONDS", "0", "must be at least 1"),
        ("LEASE_SECONDS", "1h", "is not an integer"),
        ("CLUSTER_NAME", "ml cluster", "is not a HyperPod cluster name"),
    ],
)
def test_a_malformed_variable_is_named(name: str, value: str, reason: str) -> None:
    with pytest.raises(ConfigurationError, match=f"{name} {reason}"):
        FailoverDrillFunctionSettings.from_environment({**ENVIRONMENT, name: value})
