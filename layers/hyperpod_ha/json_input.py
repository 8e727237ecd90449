"""JSON from outside, decoded or checked to a bounded depth: a typed reject, never a RecursionError.

Python's decoder recurses once per ``[``/``{``: 100,000 of them raise ``RecursionError``, which
is not a ``ValueError``, so a handler that rejects bad JSON with ``except ValueError`` crashes
instead. And a value nested a few hundred deep, decoded fine, still breaks the code that walks
it later (redaction, the dead-letter excerpt, ``json.dumps`` of a report). Every JSON text a
function reads from a node, AWS or an event goes through :func:`load_json`; an event the Lambda
runtime already decoded goes through :func:`check_depth`. The caller names its own error, so
each feature keeps the error its callers match on (an :class:`~hyperpod_ha.errors.InputRejected`,
or the transports' ``ProtocolError`` for a frame from AWS). The reason never quotes the text:
it may hold a secret.
"""

from __future__ import annotations

import json
from typing import Any, Final

from hyperpod_ha.errors import HyperpodHaError

# Deeper than anything this project reads (an SNS record with its attributes is 5 levels,
# a Step Functions input about 6) and far below the interpreter's recursion limit.
MAX_DEPTH: Final = 32


def load_json(
    text: str | bytes | bytearray,
    rejected: type[HyperpodHaError],
    *,
    what: str = "the input",
    max_depth: int = MAX_DEPTH,
) -> Any:
    """``text`` decoded; ``rejected`` when it is not JSON or nests deeper than ``max_depth``."""
    if not isinstance(text, str | bytes | bytearray):
        raise rejected(f"{what} is not a JSON text")
    try:
        value = json.loads(text)
    except RecursionError:
        raise rejected(f"{what} nests deeper than {max_depth} levels") from None
    except ValueError:  # also UnicodeDecodeError; its message may quote the text: dropped
        raise rejected(f"{what} is not JSON") from None
    check_depth(value, rejected, what=what, max_depth=max_depth)
    return value


def check_depth(
    value: object, rejected: type[HyperpodHaError], *, what: str = "the input", max_depth: int = MAX_DEPTH
) -> None:
    """``rejected`` when the decoded ``value`` nests lists and objects deeper than ``max_depth``.

    Iterative (a stack of containers, each visited once): linear in the value's size, whatever
    its depth.
    """
    pending: list[tuple[object, int]] = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth >= max_depth:
            raise rejected(f"{what} nests deeper than {max_depth} levels")
        pending.extend((child, depth + 1) for child in children if isinstance(child, dict | list | tuple))
