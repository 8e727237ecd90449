"""Reading outside text: its lines, bounded excerpts of it, ``key=value`` lines, a command's error."""

from __future__ import annotations

import re
from typing import Final

from hyperpod_ha.redaction import scrub_text
from hyperpod_ha.slurm.errors import SlurmOutputError

TEXT_LIMIT: Final = 240
ERROR_LIMIT: Final = 160


def excerpt(text: str, limit: int = TEXT_LIMIT, *, tail: bool = False) -> str:
    """One line of outside text, trimmed to a bounded size for reasons and reports.

    ``tail`` keeps the end instead of the start: Slurm puts an error's cause last.

    Node text can hold a secret (a command line, a config line), and an excerpt leaves the
    function in a report: it is cut first (cheap on any size), then scrubbed
    (:func:`~hyperpod_ha.redaction.scrub_text`). Cut at its start, its first word is dropped: it
    may be the end of a value whose key was cut off.
    """
    flat = " ".join(text.split())
    if len(flat) <= limit and len(scrubbed := scrub_text(flat)) <= limit:
        return scrubbed
    # Scrubbed before the "..." is added (a key glued to it would not be seen as one).
    if tail:
        kept = scrub_text(flat[3 - limit :].partition(" ")[2])
        return "..." + kept[max(len(kept) - limit + 3, 0) :]
    return scrub_text(flat[: limit - 3])[: limit - 3] + "..."


def split_lines(text: str) -> list[str]:
    """The text's lines, each stripped at both ends."""
    # Session Manager's pty turns \n into \r\n.
    return [line.strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]


def nonempty_lines(text: str) -> list[str]:
    """The text's lines, each stripped at both ends, without the empty ones."""
    return [line for line in split_lines(text) if line]


def first_error(text: str) -> str | None:
    """The most telling line of a failed command's output (its first error), its end kept.

    At most :data:`ERROR_LIMIT` characters, so that a prefix saying which check failed fits
    in :data:`TEXT_LIMIT`.
    """
    found = nonempty_lines(text)
    for line in found:
        if "error" in line.lower() or "fatal" in line.lower() or "unable" in line.lower():
            return excerpt(line, ERROR_LIMIT, tail=True)
    return excerpt(found[0], ERROR_LIMIT, tail=True) if found else None


# --- the probe's key=value sections ---------------------------------------------------------


def key_values(text: str) -> list[tuple[str, str]]:
    """The ``key=value`` lines of a probe section, in order."""
    # Other lines (a shell warning, a message of a command) carry nothing and are skipped.
    pairs: list[tuple[str, str]] = []
    for line in split_lines(text):
        key, sep, value = line.partition("=")
        if sep and re.fullmatch(r"[a-z_]{1,40}", key):
            pairs.append((key, value.strip()))
    return pairs


def integer(value: str | None, what: str) -> int | None:
    if value is None or value == "":
        return None
    if not re.fullmatch(r"-?[0-9]{1,19}", value):
        raise SlurmOutputError(f"{what} is not an integer: {excerpt(value, 40)!r}")
    return int(value)


def yes_no(value: str | None) -> bool | None:
    return {"yes": True, "no": False}.get(value or "")
