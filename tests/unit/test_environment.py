"""The environment readers: a missing or malformed variable is a ConfigurationError naming it."""

from __future__ import annotations

import pytest

from hyperpod_ha.environment import Integer, Number, OnOff, Text, Variable
from hyperpod_ha.errors import ConfigurationError

ENV = {"A": "x", "N": "7", "F": "2.5", "EMPTY": "", "OFF": " off", "ON": "on"}


def test_values_and_defaults() -> None:
    assert Text("A").read(ENV) == "x"
    assert Text("EMPTY", "fallback").read(ENV) == "fallback"
    assert Text("MISSING", Text("A")).read(ENV) == "x"
    assert Integer("N", minimum=1, maximum=7).read(ENV) == 7
    assert Integer("MISSING", 4).read(ENV) == 4
    assert Integer("N", scale=60).read(ENV) == 420
    assert Number("F", minimum=0.5).read(ENV) == 2.5
    assert Number("N", whole=True).read(ENV) == 7.0
    assert (OnOff("ON").read(ENV), OnOff("OFF", "on").read(ENV), OnOff("EMPTY", "on").read(ENV)) == (
        True,
        False,
        True,
    )


@pytest.mark.parametrize(
    ("variable", "message"),
    [
        (Text("MISSING"), "MISSING is not set"),
        (Text("EMPTY"), "EMPTY is not set"),
        (Integer("F"), "F is not an integer"),
        (Integer("N", maximum=6), "N must be at most 6"),
        (Integer("N", maximum=6, scale=60), "N must be at most 6"),
        (Number("A"), "A is not a number"),
        (Number("F", minimum=3), "F must be at least 3"),
        (Number("F", whole=True), "F is not an integer"),
        (OnOff("A", "on"), "A must be on or off"),
    ],
)
def test_a_bad_variable_is_named(variable: Variable[object], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        variable.read(ENV)
