"""Secrets out of what we write: keys that look like secrets, ``key=value`` secrets inside text,
URL credentials. Incidents and the database secret rotation redact with it before anything
leaves the function (OpsCenter, SNS, logs, errors)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

REDACTED = "[redacted]"
_SECRET_KEY = re.compile(
    r"password|passwd|passphrase|secret|token|credential|private[_-]?key|api[_-]?key|authorization|cookie|pass$",
    re.IGNORECASE,
)
# key=value, key: value and "key": "value" forms inside free text (command output, error causes).
# Quantifiers are bounded and anchored so that huge outputs cannot make the scan quadratic.
# Also the escaped form a JSON text inside a JSON string has (\"password\": \"...\").
_ASSIGNMENT = re.compile(r"(?P<key>\b[A-Za-z_][\w.-]{0,63})(?P<sep>\\?[\"']?[ \t]*[:=][ \t]*)")
_VALUE = re.compile(
    r"(?P<quote>\\?\"|')(?:(?!(?P=quote))[^\n]){0,4096}(?P=quote)"  # quoted
    r"|(?P<open>\\?\"|')[^\n]{0,4096}"  # a quote never closed (cut output): up to the line's end
    r"|[^\s\"'\\,;}&]+"
)
_URL_CREDENTIALS = re.compile(
    r"(?P<scheme>\b[a-z][a-z0-9+.-]{0,31}://)(?P<user>[^:/@\s]{1,256}):(?P<password>[^@/\s]{1,1024})@"
)


def scrub_text(text: str) -> str:
    """Remove secrets written inside free text (``StoragePass=...``, ``"password": "..."``, URLs).

    A key that is not a secret is stepped over and the scan goes on inside its value
    (``failed: password=...``, ``"config": "token=..."``); every step moves forward, so
    the scan stays linear in the size of the text.
    """
    kept: list[str] = []
    position = 0
    while match := _ASSIGNMENT.search(text, position):
        kept.append(text[position : match.end()])
        position = match.end()
        if _SECRET_KEY.search(match["key"]) and (value := _VALUE.match(text, position)):
            quote = value["quote"] or value["open"] or ""
            kept += [quote, REDACTED, quote]
            position = value.end()
    kept.append(text[position:])
    return _URL_CREDENTIALS.sub(lambda m: f"{m['scheme']}{m['user']}:{REDACTED}@", "".join(kept))


def redact(value: Any) -> Any:
    """A copy of a JSON-like value with every secret-looking key's value and inline secret removed."""
    if isinstance(value, Mapping):
        return {
            str(key): REDACTED if _SECRET_KEY.search(str(key)) else redact(item)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(item) for item in value]
    if isinstance(value, str):
        return scrub_text(value)
    return value
