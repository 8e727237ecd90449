"""Reading a function's settings from the environment the template gives it.

Each function reads one settings object at cold start (``XSettings.from_environment()`` at
module level in its ``app.py``), so a missing or bad variable fails the first invocation with a
:class:`~hyperpod_ha.errors.ConfigurationError` that names it, not some later code path. The
readers below take the environment as a mapping so tests pass their own."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping

from hyperpod_ha.errors import ConfigurationError

Environment = Mapping[str, str]

__all__ = ["ConfigurationError", "Environment", "choice", "environment", "integer", "number", "text"]


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
