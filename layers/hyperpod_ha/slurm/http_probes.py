"""Slurm's own answer to "who is in control": the probe's ``slurmctld_http`` section.

Slurm 25.11+ slurmctld answers ``GET /readyz`` on SlurmctldPort with 204 only while it is in
control (not in standby, not reconfiguring, listeners not quiesced) and 500 otherwise, and
``GET /livez`` with 204 while it runs (``src/slurmctld/http.c``). The probe asks its own node's
slurmctld (127.0.0.1) when the release serves them: ``key=value`` lines, ``served=no`` and
``why=`` when it does not (older release, ``CommunicationParameters=disable_http``), else
``readyz=<status>`` or ``readyz_error=<why>`` and the same for ``livez``. Never raises: a field
out of its form is unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from hyperpod_ha.slurm.text import excerpt, key_values

_STATUS = re.compile(r"[1-5][0-9][0-9]")
# The answer of a controller in control, and of one that runs but is not (standby, reconfiguring).
READY: Final = 204


@dataclass(frozen=True)
class HttpProbes:
    """What this node's slurmctld answered on its HTTP probes (None: no answer, see ``*_error``)."""

    served: bool | None  # False: this release or configuration serves none; None: not known
    why: str | None = None  # why none is served, or why it is not known
    readyz: int | None = None
    readyz_error: str | None = None
    livez: int | None = None
    livez_error: str | None = None


def parse_http_probes(text: str) -> HttpProbes:
    values = dict(key_values(text))
    served = values.get("served")
    if served in ("no", "unknown"):
        return HttpProbes(served=False if served == "no" else None, why=_text(values.get("why")))
    readyz, livez = _status(values.get("readyz")), _status(values.get("livez"))
    readyz_error, livez_error = _text(values.get("readyz_error")), _text(values.get("livez_error"))
    if readyz is None and readyz_error is None:
        readyz_error = "no answer recorded" if "readyz" not in values else "not an HTTP status"
    return HttpProbes(
        # Any HTTP answer proves the paths are served; none leaves it open (closed unanswered:
        # a build without an HTTP parser; refused or silent: slurmctld not running or hung).
        served=True if readyz is not None or livez is not None else None,
        why=readyz_error if readyz is None else None,
        readyz=readyz,
        readyz_error=readyz_error if readyz is None else None,
        livez=livez,
        livez_error=livez_error if livez is None else None,
    )


def _status(value: str | None) -> int | None:
    return int(value) if value and _STATUS.fullmatch(value) else None


def _text(value: str | None) -> str | None:
    return excerpt(value) if value else None
