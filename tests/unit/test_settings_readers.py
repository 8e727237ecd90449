"""The environment readers every settings object is built with, and the base that reads the
process's environment when no mapping is given."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Self

import pytest

from hyperpod_ha.settings import ConfigurationError, Environment, Settings, integer, number, optional, text


@dataclass(frozen=True)
class Example(Settings):
    name: str

    @classmethod
    def read(cls, env: Environment) -> Self:
        return cls(text(env, "EXAMPLE_NAME"))


def test_settings_come_from_the_given_mapping_else_the_process_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EXAMPLE_NAME", "from-process")
    assert Example.from_environment() == Example("from-process")
    assert Example.from_environment({"EXAMPLE_NAME": "given"}) == Example("given")


def test_numbers_are_parsed_defaulted_and_bounded() -> None:
    assert integer({"N": "3"}, "N") == 3
    assert integer({}, "N", 5) == 5
    assert number({"N": "2.5"}, "N") == 2.5
    assert number({"N": ""}, "N", 20) == 20.0


@pytest.mark.parametrize(
    ("read", "reason"),
    [
        (lambda: integer({"N": "many"}, "N"), "N is not an integer"),
        (lambda: integer({"N": "2.5"}, "N"), "N is not an integer"),
        (lambda: number({"N": "soon"}, "N"), "N is not a number"),
        (lambda: integer({"N": "0"}, "N", minimum=1), "N must be at least 1"),
        (lambda: number({"N": "9.5"}, "N", maximum=9), "N must be at most 9"),
        (lambda: integer({}, "N"), "N is not set"),
    ],
)
def test_a_malformed_number_is_named(read: Callable[[], object], reason: str) -> None:
    with pytest.raises(ConfigurationError, match=reason):
        read()


def test_an_optional_variable_left_empty_is_none() -> None:
    assert optional({"X": " value "}, "X") == "value"
    assert optional({"X": "  "}, "X") is None
    assert optional({}, "X") is None
