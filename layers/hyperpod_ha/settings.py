"""Reading a function's configuration from the environment the template gives it."""

from __future__ import annotations

import os


class ConfigurationError(RuntimeError):
    """A setting the template should have given the function is missing or malformed."""


def setting(name: str, default: str | None = None) -> str:
    value = os.environ.get(name, default)
    if value is None or value == "":
        if default is not None:
            return default
        raise ConfigurationError(f"environment variable {name} is not set")
    return value


def int_setting(name: str, default: int) -> int:
    raw = setting(name, str(default))
    try:
        return int(raw)
    except ValueError:
        raise ConfigurationError(f"environment variable {name} is not an integer") from None


def positive_float_setting(name: str, default: float) -> float:
    raw = setting(name, str(default))
    try:
        value = float(raw)
    except ValueError:
        raise ConfigurationError(f"environment variable {name} is not a number") from None
    if not value > 0:
        raise ConfigurationError(f"environment variable {name} must be positive")
    return value
