"""Reading variables from the environment the template gives a function.

Each function has one settings object (``<feature>/settings.py`` or its feature's function
module), read once per container on its first invocation before the event is handled, so a
missing or bad variable fails at once with a :class:`~hyperpod_ha.errors.ConfigurationError`
that names it. The readers take the environment as a mapping so tests pass their own."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping

from hyperpod_ha.errors import ConfigurationError

Environment = Mapping[str, str]

__all__ = ["Environment", "choice", "environment", "integer", "number", "text"]


def environment() -> Environment:
    return os.environ


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
    raw = text(env, name, None if default is None else str(default))
    try:
        value = int(raw)
    except ValueError:
        raise ConfigurationError(f"environment variable {name} is not an integer") from None
    _check_range(name, value, minimum, maximum)
    return value


def number(
    env: Environment,
    name: str,
    default: float | None = None,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
) -> float:
    raw = text(env, name, None if default is None else str(default))
    try:
        value = float(raw)
    except ValueError:
        raise ConfigurationError(f"environment variable {name} is not a number") from None
    _check_range(name, value, minimum, maximum)
    return value


def choice(env: Environment, name: str, allowed: Collection[str], default: str | None = None) -> str:
    value = text(env, name, default)
    if value not in allowed:
        raise ConfigurationError(f"environment variable {name} must be one of {', '.join(sorted(allowed))}")
    return value


def _check_range(name: str, value: float, minimum: float | None, maximum: float | None) -> None:
    if minimum is not None and value < minimum:
        raise ConfigurationError(f"environment variable {name} must be at least {minimum}")
    if maximum is not None and value > maximum:
        raise ConfigurationError(f"environment variable {name} must be at most {maximum}")
