"""The base of every settings object (it reads the process's environment when no mapping is
given) and the reader of an optional variable."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

import pytest

from hyperpod_ha.environment import Environment, Settings, optional, text


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


def test_an_optional_variable_left_empty_is_none() -> None:
    assert optional({"X": " value "}, "X") == "value"
    assert optional({"X": "  "}, "X") is None
    assert optional({}, "X") is None
