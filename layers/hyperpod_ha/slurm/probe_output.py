"""The controller probe's output: its sections between markers that carry the run's nonce.

``hyperpod_ha/probe/controller_probe.sh`` prints a begin line, then per section
``@@hyperpod-ha <nonce> begin <name>``, the command's output and
``@@hyperpod-ha <nonce> end <name> rc=.. ms=.. timed_out=.. truncated=..``, and last a
``HYPERPOD_HA_PROBE_RESULT {json}`` line when it ran to its end.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from hyperpod_ha.json_input import load_json
from hyperpod_ha.slurm.errors import ProbeOutputError
from hyperpod_ha.slurm.text import excerpt

PROBE_RESULT_PREFIX: Final = "HYPERPOD_HA_PROBE_RESULT "
PROBE_MARK: Final = "@@hyperpod-ha"
# Sections the probe prints, in its order.
SECTIONS: Final = (
    "identity",
    "services",
    "slurm_conf",
    "config",
    "ping",
    "sinfo",
    "sdiag",
    "dbd_clusters",
    "dbd_ping",
    "role",
    "heartbeat",
    "state_save",
    "failover_conf",
    "conf_change",
    "notify_failures",
    "slurmctld_http",
    "hyperpod_hand",
    "slurm_triggers",
)
# Exit codes of ``timeout`` (124; 137 when it had to kill) and of the probe's own kill.
TIMED_OUT_CODES: Final = frozenset({124, 137})
NOT_FOUND_CODE: Final = 127


@dataclass(frozen=True)
class ProbeSection:
    name: str
    text: str
    exit_code: int
    millis: int
    timed_out: bool  # killed by the probe at its deadline (exit_code is then 124)
    truncated: bool

    @property
    def ran_out_of_time(self) -> bool:
        return self.timed_out or self.exit_code in TIMED_OUT_CODES


@dataclass(frozen=True)
class ProbeOutput:
    version: int
    nonce: str
    sections: Mapping[str, ProbeSection]
    complete: bool  # the final result line was there: the probe ran to its end
    elapsed_ms: int | None
    error: str | None = None  # what stopped the probe, when it says so in its result line


# The probe cuts each section at 12 KiB on the node (controller_probe.sh); a section longer than
# this is cut here as well, so no section parser is ever handed more, whatever a node prints.
MAX_SECTION_CHARS: Final = 16 * 1024
# Lines holding this run's marker or a result line: the probe prints one begin and one end per
# section and one result line; more than this is not its output.
MAX_MARKERS: Final = 256

_BEGIN = re.compile(
    r"@@hyperpod-ha probe begin version=(?P<version>[0-9]{1,4}) nonce=(?P<nonce>[A-Za-z0-9]{4,40})"
)
_BEGIN_NEEDLE: Final = f"{PROBE_MARK} probe begin "
_END_FIELDS = re.compile(
    r"rc=(?P<rc>-?[0-9]{1,4}) ms=(?P<ms>[0-9]{1,9}) timed_out=(?P<to>[01]) truncated=(?P<tr>[01])"
)


def _lines_with(text: str, needles: tuple[str, ...], start: int) -> Iterator[tuple[int, int, str | None]]:
    """(line start, line end, the line stripped or None) for each line from ``start`` on that
    holds one of ``needles``; the line is given only when it begins with the needle.

    Lines end at ``\n``, ``\r\n`` or ``\r`` (Session Manager's pty writes ``\r\n``), found in
    place: the text is not copied, normalised or split. ``str.find`` jumps from one needle to
    the next and each line break is looked for once (the nearest ones are kept), so a 4 MiB
    output of empty lines or of one huge line costs a scan at C speed, not a Python loop over
    its lines. More than :data:`MAX_MARKERS` such lines is not the probe's output.
    """
    found = [text.find(needle, start) for needle in needles]
    behind = [-1, -1]  # the last "\n" and "\r" before the current line, looked for since the last one
    ahead = [-1, -1]  # the next "\n" and "\r" at or after it (len(text) when there is none)
    scanned = start
    for _ in range(MAX_MARKERS):
        live = [position for position in found if position >= 0]
        if not live:
            return
        position = min(live)
        for i, mark in enumerate("\n\r"):
            behind[i] = max(behind[i], text.rfind(mark, scanned, position))
            if ahead[i] < position:
                next_one = text.find(mark, position)
                ahead[i] = len(text) if next_one < 0 else next_one
        line_start, line_end = max(behind) + 1, min(ahead)
        at_start = not text[line_start:position].strip()
        yield line_start, line_end, text[position:line_end].strip() if at_start else None
        scanned = line_end
        found = [
            text.find(needle, line_end) if 0 <= at < line_end else at
            for needle, at in zip(needles, found, strict=True)
        ]
    if any(position >= 0 for position in found):
        raise ProbeOutputError(f"more than {MAX_MARKERS} marker lines: not the probe's output")


def parse_probe_output(text: str) -> ProbeOutput:
    """Split the probe's output into its sections (markers carry the run's nonce).

    Linear in the output, at C speed (:func:`_lines_with`); each section's text is cut to
    :data:`MAX_SECTION_CHARS` before its lines are touched.
    """
    begin = next(
        (
            (match, end)
            for _, end, line in _lines_with(text, (_BEGIN_NEEDLE,), 0)
            if line is not None and (match := _BEGIN.fullmatch(line)) is not None
        ),
        None,
    )
    if begin is None:
        raise ProbeOutputError("no probe begin line: not the controller probe's output")
    header, after_header = begin
    nonce = header["nonce"]
    section_begin = f"{PROBE_MARK} {nonce} begin "
    section_end = f"{PROBE_MARK} {nonce} end "
    sections: dict[str, ProbeSection] = {}
    result: dict[str, object] | None = None
    unreadable: str | None = None  # why a result line could not be read, when one could not
    current: str | None = None
    body_start = 0
    for line_start, line_end, line in _lines_with(
        text, (f"{PROBE_MARK} {nonce} ", PROBE_RESULT_PREFIX), after_header
    ):
        if line is None:
            continue  # a marker inside a line is text
        if current is None:
            if line.startswith(section_begin):
                current, body_start = line[len(section_begin) :], _next_line(text, line_end)
            elif line.startswith(PROBE_RESULT_PREFIX):
                try:
                    result = _result(line[len(PROBE_RESULT_PREFIX) :], nonce)
                except ProbeOutputError as problem:  # cut off mid-line, or hostile: not an end
                    result, unreadable = None, str(problem)
            continue
        if not line.startswith(section_end):
            continue  # a begin or result line inside a section is the section's text
        name, _, fields = line[len(section_end) :].partition(" ")
        match = _END_FIELDS.fullmatch(fields)
        if name != current or match is None:
            raise ProbeOutputError(f"malformed end marker of section {excerpt(current, 40)!r}")
        if current in sections:
            # The probe prints each section once: a second one is not the probe's (issue 22).
            raise ProbeOutputError(f"section {excerpt(current, 40)!r} appears twice")
        body, cut = _body(text, body_start, line_start)
        sections[current] = ProbeSection(
            name=current,
            text=body,
            exit_code=int(match["rc"]),
            millis=int(match["ms"]),
            timed_out=match["to"] == "1",
            truncated=match["tr"] == "1" or cut,
        )
        current = None
    elapsed = result.get("elapsed_ms") if result else None
    error = result.get("error") if result else unreadable
    return ProbeOutput(
        version=int(header["version"]),
        nonce=nonce,
        sections=sections,
        complete=bool(result and result.get("complete") is True),
        elapsed_ms=elapsed if isinstance(elapsed, int) else None,
        error=excerpt(error) if isinstance(error, str) else None,
    )


def _next_line(text: str, line_end: int) -> int:
    return line_end + 2 if text.startswith("\r\n", line_end) else line_end + 1


def _body(text: str, start: int, end: int) -> tuple[str, bool]:
    """A section's text (lines split at ``\n`` or ``\r\n``, their trailing blanks removed), at
    most :data:`MAX_SECTION_CHARS`; and whether it was cut (at a line's end, when it has one).
    Only the cut text is normalised. A lone ``\r`` inside a line is the line's text: a log line
    holding one is not split into two (a user's text must not start a line of its own)."""
    body = text[start:end] if start < end else ""
    body = body[:-2] if body.endswith("\r\n") else body[:-1] if body.endswith(("\n", "\r")) else body
    cut = len(body) > MAX_SECTION_CHARS
    if cut:
        body = body[:MAX_SECTION_CHARS]
        last_break = body.rfind("\n")
        body = body[:last_break] if last_break > 0 else body
    lines = body.replace("\r\n", "\n").split("\n")
    return ("\n".join(line.rstrip() for line in lines) if body else ""), cut


def _result(payload: str, nonce: str) -> dict[str, object] | None:
    result = load_json(payload, ProbeOutputError, what="the probe's result line")
    if not isinstance(result, dict) or result.get("nonce") != nonce:
        return None  # someone else's line, or a stale one
    return result
