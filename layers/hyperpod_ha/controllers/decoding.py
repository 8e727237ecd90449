"""Reading a report back from the workflow's JSON: types checked, sizes capped.

A generic decoder from JSON to the frozen dataclasses of :mod:`.models` (their tuples,
optionals and enums): every text is cut to ``TEXT_LIMIT`` characters and every list to
:data:`LIST_LIMIT` items, so a report read back stays as small as one the probe produced.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any, Final, TypeVar

from hyperpod_ha.controllers.errors import ReportRejected
from hyperpod_ha.slurm import TEXT_LIMIT

LIST_LIMIT: Final = 8
_T = TypeVar("_T")


def decode(cls: type[_T], value: object, where: str) -> _T:
    """JSON -> an instance of the dataclass ``cls``; :class:`ReportRejected` says what is wrong."""
    decoded = _decode(cls, value, where)
    assert isinstance(decoded, cls)
    return decoded


def _decode(hint: Any, value: object, where: str) -> Any:
    """JSON -> the typed value ``hint`` describes (dataclasses, tuples, optionals, enums)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(hint)
        if value is None and type(None) in args:
            return None
        (inner,) = [arg for arg in args if arg is not type(None)]
        return _decode(inner, value, where)
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise ReportRejected(f"{where} is not a list")
        item = typing.get_args(hint)[0]
        return tuple(_decode(item, one, f"{where}[{i}]") for i, one in enumerate(value[:LIST_LIMIT]))
    if isinstance(hint, type) and issubclass(hint, Enum):
        try:
            return hint(value)
        except ValueError:
            raise ReportRejected(f"{where} is not one of {[m.value for m in hint]}") from None
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _decode_dataclass(hint, value, where)
    return _decode_scalar(hint, value, where)


def _decode_dataclass(hint: type[Any], value: object, where: str) -> Any:
    if not isinstance(value, Mapping):
        raise ReportRejected(f"{where} is not an object")
    hints = typing.get_type_hints(hint)
    kwargs: dict[str, Any] = {}
    for one in dataclasses.fields(hint):
        if one.name in value:
            kwargs[one.name] = _decode(hints[one.name], value[one.name], f"{where}.{one.name}")
        elif one.default is dataclasses.MISSING and one.default_factory is dataclasses.MISSING:
            raise ReportRejected(f"{where}.{one.name} is missing")
    return hint(**kwargs)


# JSON scalar checks; bool is an int in Python, so it is excluded where a number is wanted.
_SCALARS: Final[dict[type, tuple[str, Callable[[object], bool]]]] = {
    bool: ("a boolean", lambda v: isinstance(v, bool)),
    int: ("an integer", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    float: ("a number", lambda v: isinstance(v, int | float) and not isinstance(v, bool)),
    str: ("a string", lambda v: isinstance(v, str)),
}


def _decode_scalar(hint: Any, value: object, where: str) -> Any:
    if hint not in _SCALARS:
        raise TypeError(f"no JSON decoding for {hint!r}")  # a programming error, not bad input
    what, accepts = _SCALARS[hint]
    if not accepts(value):
        raise ReportRejected(f"{where} is not {what}")
    if hint is float:
        return float(typing.cast(float, value))
    if hint is str:
        return typing.cast(str, value)[:TEXT_LIMIT]
    return value
