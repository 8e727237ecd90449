"""Whether a run checks again: a failover in progress must not be reported as a failure too early.

After a slurmctld dies, the backup takes over only after SlurmctldTimeout; a controller that
restarts takes control back within seconds. So a verdict other than HEALTHY or FAILED_OVER is
checked again, with backoff, while attempts and the run's deadline allow.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

Next = Literal["verified", "check-again", "not-verified"]
VERIFIED = frozenset({"HEALTHY", "FAILED_OVER"})


class ConvergenceInputError(ValueError):
    """The attempt counters or the run's start time are not what the workflow sends."""


def next_step(
    verdict: str,
    attempt: int,
    max_attempts: int,
    started_at: str,
    deadline_seconds: float,
    backoff_seconds: float,
    now: dt.datetime,
) -> Next:
    if verdict in VERIFIED:
        return "verified"
    if attempt < 1 or max_attempts < 1:
        raise ConvergenceInputError("attempt and max_attempts must be at least 1")
    try:
        started = dt.datetime.fromisoformat(started_at.replace("Z", "+00:00"))
    except ValueError:
        raise ConvergenceInputError(f"started_at {started_at[:40]!r} is not an ISO 8601 time") from None
    if started.tzinfo is None:
        started = started.replace(tzinfo=dt.UTC)
    # Another check only if it can start (after the backoff) before the deadline.
    next_check = now + dt.timedelta(seconds=backoff_seconds)
    if attempt >= max_attempts or next_check >= started + dt.timedelta(seconds=deadline_seconds):
        return "not-verified"
    return "check-again"
