"""Reading variables from the environment the template gives a function.

Each function has one settings object, ``<Function>Settings`` beside its entry class in its
feature's ``function.py``; a part of it that a feature's core or other functions also read
(``ProbeSettings``, ``IncidentSettings``, ``VerificationRunsSettings``, ...) sits in that
feature's ``settings.py``. It is read once per container on the first invocation, before the
event is handled, so a missing or bad variable fails every invocation with a
:class:`~hyperpod_ha.errors.ConfigurationError` that names it. A settings object is a frozen
dataclass whose fields say where they come from:

    cluster: Annotated[str, Text("CLUSTER_NAME")]
    max_attempts: Annotated[int, Integer("MAX_ATTEMPTS", 30, minimum=1)] = 30
    verification: VerificationRunsSettings  # another settings object, read from the same mapping

The readers take the environment as a mapping so tests pass their own."""

from __future__ import annotations

import dataclasses
import os
import typing
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, Self, TypeVar

from hyperpod_ha.errors import ConfigurationError

Environment = Mapping[str, str]
_Value = TypeVar("_Value")
_Value_co = TypeVar("_Value_co", covariant=True)
_Number = TypeVar("_Number", int, float)

__all__ = [
    "Environment",
    "Integer",
    "Number",
    "OptionalText",
    "Settings",
    "Text",
    "Variable",
    "environment",
]


def environment() -> Environment:
    return os.environ


class Reader(Protocol[_Value_co]):
    """What a settings field is read by: a :class:`Variable`, or a settings class."""

    def read(self, env: Environment) -> _Value_co: ...


@dataclass(frozen=True)
class Variable(ABC, Generic[_Value]):
    """One environment variable: its name, its default (the text it stands for when unset or
    empty, as the template would set it; another variable read in its place; ``None``: it must be
    set) and how its text becomes a field's value (:meth:`parse`, whose errors name it)."""

    name: str
    default: str | int | float | Variable[_Value] | None = None

    def read(self, env: Environment) -> _Value:
        raw = env.get(self.name, "")
        if raw == "":
            if isinstance(self.default, Variable):
                return self.default.read(env)
            if self.default is None:
                raise self.refused("is not set")
            raw = str(self.default)
        return self.parse(raw)

    @abstractmethod
    def parse(self, raw: str) -> _Value: ...

    def refused(self, reason: str) -> ConfigurationError:
        return ConfigurationError(f"environment variable {self.name} {reason}")


@dataclass(frozen=True, kw_only=True)
class Text(Variable[str]):
    strip: bool = False  # white space around the value is not part of it

    def parse(self, raw: str) -> str:
        return raw.strip() if self.strip else raw


@dataclass(frozen=True)
class OptionalText(Variable[str | None]):
    """The variable, or ``None`` where the template leaves it empty."""

    default: str | int | float | Variable[str | None] | None = ""

    def parse(self, raw: str) -> str | None:
        return raw.strip() or None


@dataclass(frozen=True, kw_only=True)
class _Bounded(Variable[_Number]):
    minimum: _Number | None = None
    maximum: _Number | None = None

    def parse(self, raw: str) -> _Number:
        try:
            value = self.number(raw)
        except ValueError:
            raise self.refused(f"is not {self.what()}") from None
        if self.minimum is not None and value < self.minimum:
            raise self.refused(f"must be at least {self.minimum}")
        if self.maximum is not None and value > self.maximum:
            raise self.refused(f"must be at most {self.maximum}")
        return value

    @abstractmethod
    def number(self, raw: str) -> _Number:
        """The value of ``raw``; a ValueError where it is not one."""

    @abstractmethod
    def what(self) -> str: ...


@dataclass(frozen=True, kw_only=True)
class Integer(_Bounded[int]):
    # The field's units per the variable's: 60 reads a variable in minutes (its bounds and
    # default in minutes too) into a field in seconds.
    scale: int = 1

    def number(self, raw: str) -> int:
        return int(raw)

    def parse(self, raw: str) -> int:
        return self.scale * super().parse(raw)

    def what(self) -> str:
        return "an integer"


@dataclass(frozen=True, kw_only=True)
class Number(_Bounded[float]):
    whole: bool = False  # a whole number only (a template's integer parameter), as a float

    def number(self, raw: str) -> float:
        return float(int(raw) if self.whole else raw)

    def what(self) -> str:
        return "an integer" if self.whole else "a number"


@dataclass(frozen=True)
class OnOff(Variable[bool]):
    """A template's ``on``/``off`` parameter: ``True`` for on."""

    def parse(self, raw: str) -> bool:
        value = raw.strip()
        if value not in ("on", "off"):
            raise self.refused("must be on or off")
        return value == "on"


class Settings:
    """Base of a settings object (a frozen dataclass): each field read by its reader (the
    ``Annotated`` metadata of its annotation, or its type when that is a settings class) from
    the process's environment, or from the mapping a test passes; a field without one keeps
    its default."""

    @classmethod
    def from_environment(cls, env: Environment | None = None) -> Self:
        return cls.read(environment() if env is None else env)

    @classmethod
    def read(cls, env: Environment, **defaults: str | int | float) -> Self:
        """``defaults`` replace the defaults of the named fields' variables: the reading
        function's own, where several functions share these settings."""
        readers = _readers(cls)
        for name, default in defaults.items():
            reader = readers.get(name)
            if not isinstance(reader, Variable):
                raise TypeError(f"{cls.__name__}.{name} is not read from one variable")
            readers = {**readers, name: dataclasses.replace(reader, default=default)}
        values = {name: reader.read(env) for name, reader in readers.items()}
        return cls(**values)

    @classmethod
    def with_defaults(cls, **defaults: str | int | float) -> Reader[Self]:
        """A reader of these settings with other defaults (see :meth:`read`), for a field."""
        return _WithDefaults(cls, tuple(defaults.items()))


@dataclass(frozen=True)
class _WithDefaults:
    settings: type[Settings]
    defaults: tuple[tuple[str, str | int | float], ...]

    def read(self, env: Environment) -> Any:
        return self.settings.read(env, **dict(self.defaults))


def _readers(settings: type[Settings]) -> Mapping[str, Reader[object]]:
    """The reader of each field of ``settings`` that has one (resolved once per class: it
    evaluates the annotations)."""
    if settings in _READERS:
        return _READERS[settings]
    hints = typing.get_type_hints(settings, include_extras=True)
    readers: dict[str, Reader[object]] = {}
    for field in dataclasses.fields(settings):  # type: ignore[arg-type]
        hint = hints[field.name]
        metadata = getattr(hint, "__metadata__", ())
        found = [item for item in metadata if isinstance(item, Variable | _WithDefaults)]
        if found:
            readers[field.name] = found[0]
        elif isinstance(hint, type) and issubclass(hint, Settings):
            readers[field.name] = hint
    _READERS[settings] = readers
    return readers


_READERS: dict[type[Settings], Mapping[str, Reader[object]]] = {}
