"""The settings objects of ControllerStatusFunction, HyperPodEventFunction, WatchdogFunction and
AbandonedRunFunction: read from the template's variables, defaults the template's, and a
missing or malformed variable named in the error."""

from __future__ import annotations

from typing import Any

import pytest

from hyperpod_ha.errors import ConfigurationError
from hyperpod_ha.ingestion.function import ControllerStatusFunctionSettings, HyperPodEventFunctionSettings
from hyperpod_ha.runs.function import AbandonedRunFunctionSettings
from hyperpod_ha.runs.settings import RunSettings, VerificationRunsSettings
from hyperpod_ha.watchdog.function import WatchdogFunctionSettings

BASE = {
    "CLUSTER_NAME": "ml-cluster",
    "CONTROLLER_GROUP": "controller-machine",
    "STATE_TABLE": "state",
    "IDEMPOTENCY_TABLE": "idempotency",
    "STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:verify",
    "REJECTED_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/rejected",
    "NOTIFICATION_TOPIC_ARN": "arn:aws:sns:us-east-1:123456789012:notices",
    "PROBE_DOCUMENT": "probe",
    "INCIDENT_FUNCTION_ARN": "arn:aws:lambda:us-east-1:123456789012:function:incident",
    "SLURM_FAILOVER_TOPIC_ARN": "arn:aws:sns:us-east-1:123456789012:slurm-failover",
    "STACK_ACCOUNT_ID": "123456789012",
    "AWS_REGION": "us-east-1",
}
SETTINGS: list[Any] = [
    ControllerStatusFunctionSettings,
    HyperPodEventFunctionSettings,
    WatchdogFunctionSettings,
    AbandonedRunFunctionSettings,
]


def test_the_run_settings_defaults_are_the_templates() -> None:
    assert RunSettings.from_environment({}) == RunSettings(
        settle_seconds=0, max_attempts=30, backoff_seconds=5, lease_seconds=3600
    )
    read = RunSettings.from_environment({"SETTLE_SECONDS": "60", "MAX_ATTEMPTS": "3", "BACKOFF_SECONDS": "1"})
    assert (read.settle_seconds, read.max_attempts, read.backoff_seconds) == (60, 3, 1)


def test_run_settings_from_a_stacks_parameters() -> None:
    settings = RunSettings.from_parameters({"SettleSeconds": "10", "MaxAttempts": 4}, dry_run=True)
    assert settings == RunSettings(settle_seconds=10, max_attempts=4, dry_run=True)


@pytest.mark.parametrize("settings", SETTINGS)
def test_each_function_reads_its_variables(settings: Any) -> None:
    read = settings.from_environment(BASE)
    assert read.verification == VerificationRunsSettings("state", BASE["STATE_MACHINE_ARN"], RunSettings())


def test_the_hyperpod_event_function_reads_the_mass_failure_policy() -> None:
    read = HyperPodEventFunctionSettings.from_environment(
        {**BASE, "MASS_FAILURE_THRESHOLD": "7", "MASS_FAILURE_WINDOW_MINUTES": "2"}
    )
    assert (read.mass_failure.threshold, read.mass_failure.window_seconds) == (7, 120)
    assert HyperPodEventFunctionSettings.from_environment(BASE).mass_failure.window_seconds == 600


def test_the_watchdogs_defaults() -> None:
    read = WatchdogFunctionSettings.from_environment(BASE)
    assert (read.probe.transport, read.probe.deadline_seconds) == ("session-manager", 20)


@pytest.mark.parametrize(
    ("settings", "missing"),
    [
        (ControllerStatusFunctionSettings, "IDEMPOTENCY_TABLE"),
        (ControllerStatusFunctionSettings, "REJECTED_QUEUE_URL"),
        (ControllerStatusFunctionSettings, "INCIDENT_FUNCTION_ARN"),
        (HyperPodEventFunctionSettings, "NOTIFICATION_TOPIC_ARN"),
        (HyperPodEventFunctionSettings, "CONTROLLER_GROUP"),
        (HyperPodEventFunctionSettings, "INCIDENT_FUNCTION_ARN"),
        (WatchdogFunctionSettings, "PROBE_DOCUMENT"),
        (WatchdogFunctionSettings, "CLUSTER_NAME"),
        (AbandonedRunFunctionSettings, "STATE_MACHINE_ARN"),
        (AbandonedRunFunctionSettings, "STATE_TABLE"),
    ],
)
def test_a_missing_variable_is_named(settings: Any, missing: str) -> None:
    with pytest.raises(ConfigurationError, match=f"{missing} is not set"):
        settings.from_environment({name: value for name, value in BASE.items() if name != missing})


@pytest.mark.parametrize(
    ("settings", "variable", "value", "reason"),
    [
        (ControllerStatusFunctionSettings, "MAX_ATTEMPTS", "many", "MAX_ATTEMPTS is not an integer"),
        (
            HyperPodEventFunctionSettings,
            "MASS_FAILURE_WINDOW_MINUTES",
            "ten",
            "MASS_FAILURE_WINDOW_MINUTES is not an integer",
        ),
        (
            HyperPodEventFunctionSettings,
            "MASS_FAILURE_WINDOW_MINUTES",
            "0",
            "MASS_FAILURE_WINDOW_MINUTES must be at least 1",
        ),
        (
            WatchdogFunctionSettings,
            "PROBE_DEADLINE_SECONDS",
            "soon",
            "PROBE_DEADLINE_SECONDS is not a number",
        ),
        (WatchdogFunctionSettings, "PROBE_DEADLINE_SECONDS", "0", "PROBE_DEADLINE_SECONDS must be positive"),
        (AbandonedRunFunctionSettings, "LEASE_SECONDS", "an hour", "LEASE_SECONDS is not an integer"),
    ],
)
def test_a_malformed_variable_is_named(settings: Any, variable: str, value: str, reason: str) -> None:
    with pytest.raises(ConfigurationError, match=reason):
        settings.from_environment({**BASE, variable: value})
