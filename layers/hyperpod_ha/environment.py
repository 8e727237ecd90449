"""Reading variables from the environment the template gives a function.

Each function has one settings object (``<feature>/settings.py`` or its feature's function
module), read once per container on its first invocation before the event is handled, so a
missing or bad variable fails at once with a :class:`~hyperpod_ha.errors.ConfigurationError`
that names it. The readers take the environment as a mapping so tests pass their own."""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping
from typing import Self, TypeVar

from hyperpod_ha.errors import ConfigurationError

Environment = Mapping[str, str]
_Number = TypeVar("_Number", int, float)

__all__ = [
    "Environment",
    "Settings",
    "choice",
    "environment",
    "integer",
    "number",
    "optional",
    "text",
]


def environment() -> Environment:
    return os.environ


class Settings(ABC):
    """Base of a settings object (a frozen dataclass): built by :meth:`read` from the process's
    environment, or from the mapping a test passes."""

    @classmethod
    def from_environment(cls, env: Environment | None = None) -> Self:
        return cls.read(environment() if env is None else env)

    @classmethod
    @abstractmethod
    def read(cls, env: Environment) -> Self: ...


def text(env: Environment, name: str, default: str | None = None) -> str:
    value = env.get(name, "")
    if value == "":
        if default is not None:
            return default
        raise ConfigurationError(f"environment variable {name} is not set")
    return value


def integer(
    env: Environment,
    name: str,
    default: int | None = None,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int:
    return _numeric(env, name, default, int, "an integer", minimum, maximum)


def number(
    env: Environment,
    name: str,
    default: float | None = None,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
) -> float:
    return _numeric(env, name, default, float, "a number", minimum, maximum)


def optional(env: Environment, name: str) -> str | None:
    """The variable, or ``None`` where the template leaves it empty."""
    return text(env, name, "").strip() or None


def choice(env: Environment, name: str, allowed: Collection[str], default: str | None = None) -> str:
    value = text(env, name, default)
    if value not in allowed:
        raise ConfigurationError(f"environment variable {name} must be one of {', '.join(sorted(allowed))}")
    return value


def _numeric(
    env: Environment,
    name: str,
    default: _Number | None,
    parse: Callable[[str], _Number],
    what: str,
    minimum: _Number | None,
    maximum: _Number | None,
) -> _Number:
    raw = text(env, name, None if default is None else str(default))
    try:
        value = parse(raw)
    except ValueError:
        raise ConfigurationError(f"environment variable {name} is not {what}") from None
    if minimum is not None and value < minimum:
        raise ConfigurationError(f"environment variable {name} must be at least {minimum}")
    if maximum is not None and value > maximum:
        raise ConfigurationError(f"environment variable {name} must be at most {maximum}")
    return value
