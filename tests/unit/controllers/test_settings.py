"""The settings of DiscoverControllersFunction and HealthCheckFunction: read, defaulted, refused."""

from __future__ import annotations

from typing import Any

import pytest

from hyperpod_ha.controllers.function import DiscoverControllersFunctionSettings
from hyperpod_ha.controllers.settings import DEFAULT_TRANSPORT, HEALTH_CHECK_DEADLINE_SECONDS, ProbeSettings
from hyperpod_ha.errors import ConfigurationError
from hyperpod_ha.watchdog.function import PROBE_DEADLINE_SECONDS as WATCHDOG_PROBE_DEADLINE_SECONDS
from hyperpod_ha_stack.template import load_template
from tests.conftest import ROOT

DISCOVERY = {"CLUSTER_NAME": "ml-cluster", "CONTROLLER_GROUP": "controller-machine"}
DEADLINE = "environment variable PROBE_DEADLINE_SECONDS"
PROBE = {"COMMAND_TRANSPORT": "run-command", "PROBE_DOCUMENT": "probe-doc", "PROBE_DEADLINE_SECONDS": "45"}


def test_discovery_settings() -> None:
    settings = DiscoverControllersFunctionSettings.from_environment(DISCOVERY)
    assert settings == DiscoverControllersFunctionSettings("ml-cluster", "controller-machine")


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"CONTROLLER_GROUP": "controller-machine"}, "environment variable CLUSTER_NAME is not set"),
        ({**DISCOVERY, "CONTROLLER_GROUP": ""}, "environment variable CONTROLLER_GROUP is not set"),
        (
            {**DISCOVERY, "CLUSTER_NAME": "ml cluster; rm"},
            "environment variable CLUSTER_NAME is not a HyperPod cluster name",
        ),
    ],
)
def test_discovery_settings_refused(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        DiscoverControllersFunctionSettings.from_environment(env)
    assert str(raised.value) == message


def test_probe_settings() -> None:
    assert ProbeSettings.from_environment(PROBE) == ProbeSettings("run-command", "probe-doc", 45.0)
    defaulted = ProbeSettings.from_environment({"PROBE_DOCUMENT": "probe-doc"})
    assert (defaulted.transport, defaulted.deadline_seconds) == ("session-manager", 90.0)
    assert ProbeSettings.read({"PROBE_DOCUMENT": "d"}, deadline_seconds=20).deadline_seconds == 20


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"PROBE_DEADLINE_SECONDS": "45"}, "environment variable PROBE_DOCUMENT is not set"),
        ({**PROBE, "PROBE_DEADLINE_SECONDS": "soon"}, f"{DEADLINE} is not a number"),
        ({**PROBE, "PROBE_DEADLINE_SECONDS": "0"}, f"{DEADLINE} must be positive"),
        ({**PROBE, "PROBE_DEADLINE_SECONDS": "nan"}, f"{DEADLINE} must be positive"),
    ],
)
def test_probe_settings_refused(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        ProbeSettings.from_environment(env)
    assert str(raised.value) == message


def test_the_defaults_are_the_template_values() -> None:
    template: dict[str, Any] = load_template(ROOT / "template.yaml")
    health_check = template["Resources"]["HealthCheckFunction"]["Properties"]["Environment"]["Variables"]
    assert float(health_check["PROBE_DEADLINE_SECONDS"]) == HEALTH_CHECK_DEADLINE_SECONDS
    watchdog = template["Resources"]["WatchdogFunction"]["Properties"]["Environment"]["Variables"]
    assert float(watchdog["PROBE_DEADLINE_SECONDS"]) == WATCHDOG_PROBE_DEADLINE_SECONDS
    assert template["Parameters"]["CommandTransport"]["Default"] == DEFAULT_TRANSPORT
