"""The environment readers: a missing or malformed variable is a ConfigurationError naming it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hyperpod_ha.environment import choice, integer, number, text
from hyperpod_ha.errors import ConfigurationError


def test_values_and_defaults() -> None:
    env = {"A": "x", "N": "7", "F": "2.5", "EMPTY": ""}
    assert text(env, "A") == "x"
    assert text(env, "EMPTY", "fallback") == "fallback"
    assert integer(env, "N", minimum=1, maximum=7) == 7
    assert integer(env, "MISSING", 4) == 4
    assert number(env, "F", minimum=0.5) == 2.5
    assert choice(env, "A", {"x", "y"}) == "x"


@pytest.mark.parametrize(
    ("read", "message"),
    [
        (lambda env: text(env, "MISSING"), "MISSING is not set"),
        (lambda env: text(env, "EMPTY"), "EMPTY is not set"),
        (lambda env: integer(env, "F"), "F is not an integer"),
        (lambda env: integer(env, "N", maximum=6), "N must be at most 6"),
        (lambda env: number(env, "A"), "A is not a number"),
        (lambda env: number(env, "F", minimum=3), "F must be at least 3"),
        (lambda env: choice(env, "A", {"y", "z"}), "A must be one of y, z"),
    ],
)
def test_a_bad_variable_is_named(read: Callable[[dict[str, str]], object], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        read({"A": "x", "N": "7", "F": "2.5", "EMPTY": ""})
