"""WatchdogFunction's failures are never silent: a bad setting, a wiring that fails and a bad
tick are each logged with the reason and counted under the metric the alarms and the dashboard
read, then raised (the dead-letter queue keeps the tick)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from botocore.exceptions import ClientError

from hyperpod_ha.commands import InvalidCommandRequest
from hyperpod_ha.controllers.errors import ControllerGroupNotFound
from hyperpod_ha.errors import ConfigurationError
from hyperpod_ha.observability import metrics
from hyperpod_ha.watchdog.function import WatchdogFunction, WatchdogFunctionSettings, failure
from hyperpod_ha.watchdog.tick import TickRejected

ENVIRONMENT = {
    "CLUSTER_NAME": "ml-cluster",
    "CONTROLLER_GROUP": "controller-machine",
    "STATE_TABLE": "state",
    "STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:verify",
    "PROBE_DOCUMENT": "probe",
}


def client_error(code: str) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": "m"}}, "DescribeCluster")


@pytest.mark.parametrize(
    ("error", "metric"),
    [
        (TickRejected("no tick_id"), "WatchdogTicksRejected"),
        (ConfigurationError("environment variable CLUSTER_NAME is not set"), "WatchdogConfigurationErrors"),
        (InvalidCommandRequest("unknown command transport"), "WatchdogConfigurationErrors"),
        (ControllerGroupNotFound("no instance group named 'x'"), "WatchdogConfigurationErrors"),
        (client_error("ResourceNotFound"), "WatchdogConfigurationErrors"),
        (client_error("ThrottlingException"), "WatchdogFailures"),
        (RuntimeError("the probe broke"), "WatchdogFailures"),
    ],
)
def test_each_failure_has_its_metric(error: Exception, metric: str) -> None:
    assert failure(error)[0] == metric


def logged_errors(caplog: pytest.LogCaptureFixture) -> list[tuple[str, Any]]:
    return [
        (r.getMessage(), getattr(r, "reason", None)) for r in caplog.records if r.levelno == logging.ERROR
    ]


def test_a_bad_setting_is_logged_counted_and_raised(caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(ConfigurationError, match="PROBE_DOCUMENT is not set"):
        WatchdogFunctionSettings.from_environment({**ENVIRONMENT, "PROBE_DOCUMENT": ""})
    assert logged_errors(caplog) == [
        ("watchdog configuration is wrong", "environment variable PROBE_DOCUMENT is not set")
    ]
    assert "WatchdogConfigurationErrors" in metrics.metric_set


def test_good_settings_count_nothing(caplog: pytest.LogCaptureFixture) -> None:
    read = WatchdogFunctionSettings.from_environment(ENVIRONMENT)
    assert (read.cluster, read.probe.document) == ("ml-cluster", "probe")
    assert logged_errors(caplog) == []
    assert metrics.metric_set == {}


def test_an_unknown_transport_fails_the_wiring_counted(caplog: pytest.LogCaptureFixture) -> None:
    settings = WatchdogFunctionSettings.from_environment(
        {**ENVIRONMENT, "COMMAND_TRANSPORT": "carrier-pigeon"}
    )
    with pytest.raises(InvalidCommandRequest):
        WatchdogFunction.from_settings(settings)
    ((message, reason),) = logged_errors(caplog)
    assert message == "watchdog configuration is wrong"
    assert "carrier-pigeon" in reason
    assert "WatchdogConfigurationErrors" in metrics.metric_set


class NeverTicks:
    def tick(self, tick: object) -> None:
        pytest.fail("a rejected tick must not reach the check")


def test_a_bad_tick_is_rejected_before_any_check(caplog: pytest.LogCaptureFixture) -> None:
    function = WatchdogFunction(NeverTicks())  # type: ignore[arg-type]
    with pytest.raises(TickRejected):
        function.handle({"source": "hyperpod-ha.watchdog", "tick_id": "<aws.scheduler.execution-id>"}, None)  # type: ignore[arg-type]
    assert [message for message, _ in logged_errors(caplog)] == ["watchdog tick rejected"]
    assert "WatchdogTicksRejected" in metrics.metric_set
