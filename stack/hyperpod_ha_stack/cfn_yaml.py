"""CloudFormation YAML as a person writes it: block style, the short tags (``!Ref``, ``!Sub``,
``!If``...), multi-line text as a literal block. The generated end of template.yaml is written
with it so that it reads in review like the hand-written part above it.

Only what reads back as the same value is written (a test parses every form back with SAM's
reader): a string that YAML would read as something else is double-quoted; a function whose
argument is itself a function is written in full (``Fn::Base64: !FindInMap [...]``), since
CloudFormation's YAML takes no short tag right after another.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

import yaml

# The functions this template's generated part uses, by their short tag.
SHORT_TAGS = {
    "Ref": "!Ref",
    "Condition": "!Condition",
    **{
        f"Fn::{name}": f"!{name}"
        for name in ("Base64", "FindInMap", "GetAtt", "If", "Join", "Select", "Split", "Sub", "Equals", "Not")
    },
}
# A function's arguments are written on its line, in brackets, up to this width.
FLOW_WIDTH = 100
INDENT = "  "
_PLAIN_START = re.compile(r"[A-Za-z0-9_$/(]")
_FLOW_INDICATORS = re.compile(r"[\[\]{},]")


def block(value: Mapping[str, Any], depth: int) -> str:
    """``value``'s entries as block YAML, each line ``depth`` indents in, ending with a newline."""
    return "".join(line + "\n" for line in _mapping(value, depth))


def _function(value: Any) -> tuple[str, Any] | None:
    """(short tag, argument) when ``value`` is a function this module writes short: a tagged
    scalar reads as text, so a number, a boolean or a null argument is written in full."""
    if isinstance(value, dict) and len(value) == 1:
        ((name, argument),) = value.items()
        if name in SHORT_TAGS and isinstance(argument, str | list | dict) and _function(argument) is None:
            return SHORT_TAGS[name], argument
    return None


def _scalar(value: Any, flow: bool = False) -> str | None:
    """One-line text of a scalar, or None when ``value`` is not one (or needs a block)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if not isinstance(value, str) or (_literal(value) and not flow):
        return None
    return value if _plain(value, flow) else json.dumps(value)


def _plain(text: str, flow: bool) -> bool:
    """Whether ``text`` reads back as itself unquoted (conservative: when in doubt, quote)."""
    if not text or text != text.strip() or not _PLAIN_START.match(text) or not text.isprintable():
        return False
    if ": " in text or " #" in text or text.endswith(":") or (flow and _FLOW_INDICATORS.search(text)):
        return False
    try:
        return bool(yaml.safe_load(text) == text)
    except yaml.YAMLError:
        return False


def _literal(text: str) -> bool:
    """Whether ``text`` can be a literal block (``|`` or ``|-``) that reads back as itself."""
    lines = text.removesuffix("\n").split("\n")
    return (
        len(lines) > 1
        and not text.endswith("\n\n")
        # YAML takes the block's indent from its first line with text: none may start with a blank.
        and not next((line for line in lines if line), "").startswith(" ")
        and all(line.isprintable() and line == line.rstrip() for line in lines)
    )


def _literal_lines(text: str, depth: int) -> Iterator[str]:
    for line in text.removesuffix("\n").split("\n"):
        yield INDENT * depth + line if line else ""


def _mapping(value: Mapping[str, Any], depth: int) -> Iterator[str]:
    for key, item in value.items():
        yield from _entry(f"{INDENT * depth}{_scalar(str(key), flow=True)}:", item, depth)


def _entry(head: str, item: Any, depth: int) -> Iterator[str]:
    """``head`` (``key:`` or ``-``) followed by ``item``: on the line when it fits there, else
    below it, one indent further in."""
    inline = _inline(item)
    if inline is not None:
        yield f"{head} {inline}"
        return
    function = _function(item)
    if function is not None:
        tag, item = function
        head = f"{head} {tag}"
    if isinstance(item, str):  # only text that needs a block comes here
        yield f"{head} |" + ("" if item.endswith("\n") else "-")
        yield from _literal_lines(item, depth + 1)
    elif isinstance(item, dict) and item:
        yield head
        yield from _mapping(item, depth + 1)
    elif isinstance(item, list) and item:
        yield head
        yield from _sequence(item, depth + 1)
    else:
        yield f"{head} {'{}' if isinstance(item, dict) else '[]'}"


def _sequence(items: list[Any], depth: int) -> Iterator[str]:
    dash = f"{INDENT * depth}-"
    for item in items:
        lines = list(_entry(dash, item, depth))
        if lines[0] != dash:
            yield from lines
            continue
        # A mapping's (or a list's) first entry goes on the dash's line, as people write it.
        yield f"{dash} " + lines[1].removeprefix(INDENT * (depth + 1))
        yield from lines[2:]


def _inline(item: Any) -> str | None:
    """``item`` on one line: a scalar, or a function of a scalar, or of scalars that fit
    ``FLOW_WIDTH``."""
    text = _scalar(item)
    if text is not None:
        return text
    function = _function(item)
    if function is None:
        return None
    tag, argument = function
    if tag == "!GetAtt" and isinstance(argument, list) and len(argument) == 2 and "." not in argument[0]:
        argument = ".".join(argument)
    if not isinstance(argument, list | dict):
        text = _scalar(argument)
        return None if text is None else f"{tag} {text}"
    flow = _flow(argument)
    return f"{tag} {flow}" if flow is not None and len(flow) <= FLOW_WIDTH else None


def _flow(value: Any) -> str | None:
    """``value`` in flow style (``[a, !Ref b]``), or None when it holds a mapping or a block."""
    if isinstance(value, list):
        items = [_flow(item) for item in value]
        return None if None in items else "[" + ", ".join(str(item) for item in items) + "]"
    function = _function(value)
    if function is not None:
        tag, argument = function
        if isinstance(argument, list):
            return None  # a tagged list inside a list: clearer in block style
        text = _flow(argument)
        return None if text is None else f"{tag} {text}"
    if isinstance(value, dict):
        return None
    return _scalar(value, flow=True)
