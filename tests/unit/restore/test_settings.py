"""RestoreSettings: the mode, the hourly bound and the minutes before a reboot, as the template
sets them."""

from __future__ import annotations

import pytest

from hyperpod_ha.errors import ConfigurationError
from hyperpod_ha.restore.settings import RestoreMode, RestoreSettings, restore_mode


def test_defaults_are_the_templates() -> None:
    settings = RestoreSettings.read({})
    assert settings.restore_mode is RestoreMode.OFF
    assert settings.max_per_hour == 2
    assert settings.unreachable_seconds == 15 * 60


@pytest.mark.parametrize(("minutes", "seconds"), [("5", 300), ("1440", 86_400)])
def test_unreachable_minutes_at_its_bounds_are_read_in_seconds(minutes: str, seconds: int) -> None:
    assert RestoreSettings.read({"RESTORE_UNREACHABLE_MINUTES": minutes}).unreachable_seconds == seconds


def test_the_templates_bounds_are_the_settings() -> None:
    from hyperpod_ha.restore import settings
    from hyperpod_ha_stack.template import load_template
    from tests.conftest import ROOT

    parameter = load_template(ROOT / "template.yaml")["Parameters"]["RestoreUnreachableMinutes"]
    assert (parameter["Default"], parameter["MinValue"], parameter["MaxValue"]) == (
        settings.DEFAULT_UNREACHABLE_MINUTES,
        settings.MIN_UNREACHABLE_MINUTES,
        settings.MAX_UNREACHABLE_MINUTES,
    )


@pytest.mark.parametrize("mode", ["off", "standbys", "all"])
def test_every_mode_is_read(mode: str) -> None:
    assert RestoreSettings.read({"RESTORE_REDUNDANCY": mode}).restore_mode.value == mode


@pytest.mark.parametrize(
    ("env", "variable"),
    [
        ({"RESTORE_REDUNDANCY": "everything"}, "RESTORE_REDUNDANCY"),
        ({"RESTORE_MAX_PER_HOUR": "0"}, "RESTORE_MAX_PER_HOUR"),
        ({"RESTORE_MAX_PER_HOUR": "11"}, "RESTORE_MAX_PER_HOUR"),
        ({"RESTORE_MAX_PER_HOUR": "two"}, "RESTORE_MAX_PER_HOUR"),
        ({"RESTORE_UNREACHABLE_MINUTES": "4"}, "RESTORE_UNREACHABLE_MINUTES"),
        ({"RESTORE_UNREACHABLE_MINUTES": "1441"}, "RESTORE_UNREACHABLE_MINUTES"),
        ({"RESTORE_UNREACHABLE_MINUTES": "15.5"}, "RESTORE_UNREACHABLE_MINUTES"),
    ],
)
def test_a_bad_value_names_its_variable(env: dict[str, str], variable: str) -> None:
    with pytest.raises(ConfigurationError, match=variable):
        RestoreSettings.read(env)


def test_a_requested_mode_is_one_we_know_or_none() -> None:
    assert restore_mode("all") is RestoreMode.ALL
    assert restore_mode("ALL") is None
    assert restore_mode(3) is None
