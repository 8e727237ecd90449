"""The dead-letter message for input this project will never understand: its reason and as
much of the input as fits an SQS message, whatever the input holds; building it never fails.
"""

from __future__ import annotations

import json
from typing import Any

from hyperpod_ha import request_fields
from hyperpod_ha.redaction import redact

# SQS message bodies are at most 256 KiB (UTF-8 bytes); keep the rejected input well under that.
SQS_MAX_BODY_BYTES = 256 * 1024
MAX_KEPT_BYTES = 200_000
# The id and reason come from the input too (an SNS MessageId, an event id): bounded as well.
MAX_ID_CHARS = request_fields.MAX_ID_CHARS
MAX_REASON_CHARS = 1024
# How much of a rejected input is kept: whole when it is small (every real notification and
# event is, a few KiB at most), else its start, in JSON characters. It is cut to this before
# the redaction sees it: redacting costs time with every secret-like form in the text (a
# 256 KiB SNS message of short "key=" pairs took 117 ms whole), so a reject of the largest
# input costs no more than one of 8 KiB. The walk stops at these bounds as well.
EXCERPT_CHARS = 8 * 1024
_EXCERPT_NODES = 2_000
_EXCERPT_DEPTH = 32


def rejected_body(source: str, input_id: str, reason: str, raw: Any) -> str:
    """The dead-letter message for one rejected input: at most :data:`MAX_KEPT_BYTES` UTF-8 bytes,
    ASCII JSON (every character SQS accepts). Never raises: the reject path must not fail.

    Everything is cut before the one redaction path sees it: the id, the reason and an excerpt of
    the input of at most :data:`EXCERPT_CHARS` (and :data:`_EXCERPT_DEPTH` deep, so the walk is
    bounded), whatever the input's size."""
    head = redact({"source": source[:64], "id": input_id[:MAX_ID_CHARS], "reason": reason[:MAX_REASON_CHARS]})
    try:
        excerpt = _Excerpt()
        kept = redact(excerpt.of(raw, 0))
        body = json.dumps({**head, "input": kept, "input_truncated": excerpt.truncated})
    except Exception:  # whatever the input holds, the message goes out
        body = ""
    if not body or len(body) > MAX_KEPT_BYTES:
        # Not writable as JSON at all, or an id and reason so full of escapes that no room is left.
        body = json.dumps({**head, "input_dropped": True})
    return body


class _Excerpt:
    """A copy of a JSON value cut to a budget of encoded characters, nodes and depth."""

    def __init__(self) -> None:
        self.chars = EXCERPT_CHARS
        self.nodes = _EXCERPT_NODES
        self.truncated = False

    def _spend(self, chars: int) -> bool:
        self.nodes -= 1
        self.chars -= chars
        if self.chars < 0 or self.nodes < 0:
            self.truncated = True
            return False
        return True

    def _text(self, value: str) -> str | None:
        if len(value) <= 64 and value.isascii():
            cost = 6 * len(value) + 2  # an upper bound: each escape is at most 6 characters
        else:
            room = max(self.chars - 2, 0)  # what is left once the separator is paid for
            value = value[:room]
            cost = len(json.dumps(value))
            while cost > room and value:
                value = value[: len(value) * room // cost]
                cost = len(json.dumps(value))
                self.truncated = True
        return value if self._spend(cost + 2) else None

    def of(self, value: Any, depth: int) -> Any:
        if isinstance(value, dict | list | tuple):
            return self._container(value, depth)
        if isinstance(value, str):
            return self._text(value)
        if value is None or isinstance(value, bool | int | float):
            # str(): json writes numbers the same way (a float's "Infinity" is 8 characters).
            cost = 7 if value is None or isinstance(value, bool) else max(len(str(value)), 8) + 2
            return value if self._spend(cost) else None
        return self._text(str(value)[:MAX_ID_CHARS])

    def _container(self, value: dict[Any, Any] | list[Any] | tuple[Any, ...], depth: int) -> Any:
        if depth >= _EXCERPT_DEPTH or not self._spend(4):
            self.truncated = True
            return None
        if isinstance(value, dict):
            kept: dict[str, Any] = {}
            for key, item in value.items():
                name = self._text(str(key)[:MAX_ID_CHARS])
                if name is None:
                    break
                kept[name] = self.of(item, depth + 1)
                if self.truncated:
                    break
            return kept
        items: list[Any] = []
        for item in value:
            items.append(self.of(item, depth + 1))
            if self.truncated:
                break
        return items
