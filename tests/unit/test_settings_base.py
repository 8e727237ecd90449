"""The base of every settings object (its fields read by their readers, from the process's
environment when no mapping is given) and the reader of an optional variable."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import pytest

from hyperpod_ha.environment import Integer, OptionalText, Settings, Text


@dataclass(frozen=True)
class Inner(Settings):
    size: Annotated[int, Integer("EXAMPLE_SIZE", 3)]


@dataclass(frozen=True)
class Example(Settings):
    name: Annotated[str, Text("EXAMPLE_NAME")]
    inner: Inner = Inner(3)
    sized: Annotated[Inner, Inner.with_defaults(size=5)] = Inner(5)
    unread: str = "kept"


def test_settings_come_from_the_given_mapping_else_the_process_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EXAMPLE_NAME", "from-process")
    assert Example.from_environment() == Example("from-process")
    assert Example.from_environment({"EXAMPLE_NAME": "given"}) == Example("given")


def test_nested_settings_are_read_from_the_same_mapping_with_their_own_defaults() -> None:
    assert Example.from_environment({"EXAMPLE_NAME": "n", "EXAMPLE_SIZE": "9"}) == Example(
        "n", Inner(9), Inner(9)
    )
    assert Example.read({"EXAMPLE_NAME": "n"}, name="default") == Example("n")
    assert Example.read({}, name="default") == Example("default")


def test_only_a_field_read_from_one_variable_takes_a_default() -> None:
    with pytest.raises(TypeError, match=r"Example\.inner"):
        Example.read({}, inner="9")


def test_an_optional_variable_left_empty_is_none() -> None:
    assert OptionalText("X").read({"X": " value "}) == "value"
    assert OptionalText("X").read({"X": "  "}) is None
    assert OptionalText("X").read({}) is None
