"""The controller probe's output: its sections between markers that carry the run's nonce.

``hyperpod_ha/probe/controller_probe.sh`` prints a begin line, then per section
``@@hyperpod-ha <nonce> begin <name>``, the command's output and
``@@hyperpod-ha <nonce> end <name> rc=.. ms=.. timed_out=.. truncated=..``, and last a
``HYPERPOD_HA_PROBE_RESULT {json}`` line when it ran to its end.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

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


_BEGIN = re.compile(
    r"@@hyperpod-ha probe begin version=(?P<version>[0-9]{1,4}) nonce=(?P<nonce>[A-Za-z0-9]{4,40})"
)
_END_FIELDS = re.compile(
    r"rc=(?P<rc>-?[0-9]{1,4}) ms=(?P<ms>[0-9]{1,9}) timed_out=(?P<to>[01]) truncated=(?P<tr>[01])"
)


def parse_probe_output(text: str) -> ProbeOutput:
    """Split the probe's output into its sections (markers carry the run's nonce)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    start = next((i for i, line in enumerate(lines) if _BEGIN.fullmatch(line.strip())), None)
    if start is None:
        raise ProbeOutputError("no probe begin line: not the controller probe's output")
    begin = _BEGIN.fullmatch(lines[start].strip())
    assert begin is not None
    nonce = begin["nonce"]
    section_begin = f"{PROBE_MARK} {nonce} begin "
    section_end = f"{PROBE_MARK} {nonce} end "
    sections: dict[str, ProbeSection] = {}
    result: dict[str, object] | None = None
    current: str | None = None
    body: list[str] = []
    for raw in lines[start + 1 :]:
        line = raw.strip()
        if current is None:
            if line.startswith(section_begin):
                current = line[len(section_begin) :]
                body = []
            elif line.startswith(PROBE_RESULT_PREFIX):
                result = _result(line[len(PROBE_RESULT_PREFIX) :], nonce)
            continue
        if line.startswith(section_end):
            name, _, fields = line[len(section_end) :].partition(" ")
            match = _END_FIELDS.fullmatch(fields)
            if name != current or match is None:
                raise ProbeOutputError(f"malformed end marker of section {excerpt(current, 40)!r}")
            if current in sections:
                # The probe prints each section once: a second one is not the probe's (issue 22).
                raise ProbeOutputError(f"section {excerpt(current, 40)!r} appears twice")
            sections[current] = ProbeSection(
                name=current,
                text="\n".join(body),
                exit_code=int(match["rc"]),
                millis=int(match["ms"]),
                timed_out=match["to"] == "1",
                truncated=match["tr"] == "1",
            )
            current = None
        else:
            body.append(raw.rstrip())
    elapsed = result.get("elapsed_ms") if result else None
    error = result.get("error") if result else None
    return ProbeOutput(
        version=int(begin["version"]),
        nonce=nonce,
        sections=sections,
        complete=bool(result and result.get("complete") is True),
        elapsed_ms=elapsed if isinstance(elapsed, int) else None,
        error=excerpt(error) if isinstance(error, str) else None,
    )


def _result(payload: str, nonce: str) -> dict[str, object] | None:
    try:
        result = json.loads(payload)
    except ValueError:
        return None
    if not isinstance(result, dict) or result.get("nonce") != nonce:
        return None  # someone else's line, or a stale one
    return result
