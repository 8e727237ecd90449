"""The captures' clock moved to the scenario's: a captured log line keeps its place in time
relative to the others, and the newest line of what a scenario shows lands at the moment the
scenario runs (otherwise a failover that just happened reads "logged ... 1 d 19 h ago").

slurmctld logs local time without a zone (``[2026-11-29T23:30:42.527]``), and the probe reads
the node's local clock: the shift is in local time too.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass

_STAMP = re.compile(r"\[(?P<at>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?P<fraction>\.\d+)?\]")


def latest(text: str) -> dt.datetime | None:
    """The newest timestamp of a slurmctld log capture; None when it has none."""
    stamps = [dt.datetime.fromisoformat(m["at"] + (m["fraction"] or "")) for m in _STAMP.finditer(text)]
    return max(stamps, default=None)


@dataclass(frozen=True)
class CaptureClock:
    """Adds ``shift`` to every timestamp of a capture."""

    shift: dt.timedelta = dt.timedelta(0)

    @classmethod
    def anchored(cls, texts: Iterable[str], now: dt.datetime) -> CaptureClock:
        """The clock on which the newest line of ``texts`` was logged ``now`` (local, naive)."""
        newest = max((stamp for text in texts if (stamp := latest(text)) is not None), default=None)
        return cls(dt.timedelta(0) if newest is None else now - newest)

    def apply(self, text: str) -> str:
        if not self.shift:
            return text
        return _STAMP.sub(self._moved, text)

    def _moved(self, match: re.Match[str]) -> str:
        fraction = match["fraction"]
        moved = dt.datetime.fromisoformat(match["at"] + (fraction or "")) + self.shift
        if fraction is None:
            return f"[{moved.strftime('%Y-%m-%dT%H:%M:%S')}]"
        # As logged: as many digits of the second as the capture had (slurmctld writes three).
        digits = len(fraction) - 1
        return f"[{moved.strftime('%Y-%m-%dT%H:%M:%S')}.{moved.strftime('%f')[:digits]}]"
